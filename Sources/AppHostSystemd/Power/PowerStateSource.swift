import AppHost

/// Where the daemon reads the power state: power-profiles-daemon's `ActiveProfile` (low power
/// mode is `power-saver`) and UPower's `OnBattery` and its display device's `WarningLevel`, on
/// the system bus.
package enum PowerStateSource {
    /// power-profiles-daemon 0.20 and later; 0.30 (Debian 13) owns both names, and this one is
    /// read then.
    static let profiles = BusPropertyWatch.Object(
        name: "org.freedesktop.UPower.PowerProfiles", path: "/org/freedesktop/UPower/PowerProfiles", interface: "org.freedesktop.UPower.PowerProfiles",
        properties: ["ActiveProfile"]
    )
    /// The only name of power-profiles-daemon 0.12 (Debian 12).
    static let hadessProfiles = BusPropertyWatch.Object(
        name: "net.hadess.PowerProfiles", path: "/net/hadess/PowerProfiles", interface: "net.hadess.PowerProfiles", properties: ["ActiveProfile"]
    )
    static let upower = BusPropertyWatch.Object(
        name: "org.freedesktop.UPower", path: "/org/freedesktop/UPower", interface: "org.freedesktop.UPower", properties: ["OnBattery"]
    )
    static let displayDevice = BusPropertyWatch.Object(
        name: "org.freedesktop.UPower", path: "/org/freedesktop/UPower/devices/DisplayDevice", interface: "org.freedesktop.UPower.Device",
        properties: ["WarningLevel"]
    )

    /// The objects followed, in the order `reading(_:)` reads them.
    static let objects = [profiles, hadessProfiles, upower, displayDevice]
    /// Who tells it, for the log and the daemon's start line.
    package static let sources = "power-profiles-daemon or UPower"

    /// UPower's `WarningLevel`, 0 to 5.
    static let warningLevels: [PowerState.BatteryWarningLevel] = [.unknown, .none, .discharging, .low, .critical, .action]

    /// The state from the four objects' properties.
    static func reading(_ properties: [[String: BusPropertyWatch.Value]?]) -> BusConditionClient<PowerState>.Reading {
        let values = properties + Array(repeating: nil, count: max(0, objects.count - properties.count))
        var state = PowerState()
        var sources: [String] = []
        var detail: [String] = []
        if let profile = values[0]?["ActiveProfile"] ?? values[1]?["ActiveProfile"], case .string(let name) = profile {
            state.isLowPowerModeEnabled = name == "power-saver"
            sources.append(values[0] != nil ? "power-profiles-daemon" : "power-profiles-daemon (net.hadess.PowerProfiles)")
            detail.append("ActiveProfile \(name)")
        }
        if case .bool(let onBattery)? = values[2]?["OnBattery"] {
            state.isOnBattery = onBattery
            sources.append("UPower")
            detail.append("OnBattery \(onBattery)")
        }
        if case .uint32(let level)? = values[3]?["WarningLevel"] {
            state.batteryWarningLevel = level < warningLevels.count ? warningLevels[Int(level)] : .unknown
            if !sources.contains("UPower") { sources.append("UPower") }
            detail.append("WarningLevel \(level)")
        }
        return .init(value: state, source: sources.isEmpty ? nil : sources.joined(separator: " and "), detail: detail.isEmpty ? "no source" : detail.joined(separator: ", "))
    }
}

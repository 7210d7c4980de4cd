/// The machine's power, as `ProcessInfo`'s power state tells an app: low power mode (a
/// `power-saver` profile), whether it runs on battery, and the battery's warning level. The
/// host keeps the newest (`ApplicationHandle.powerState`) and tells every service when it
/// changes (`applicationPowerStateDidChange`): do less in low power mode or on a low battery.
public struct PowerState: Sendable, Hashable, CustomStringConvertible {
    /// How low the battery is, as UPower rates its display device.
    public enum BatteryWarningLevel: String, Sendable, Hashable, CaseIterable {
        /// No source says.
        case unknown
        /// Not low (or on mains).
        case none
        /// A UPS discharging.
        case discharging
        /// Low.
        case low
        /// Critically low.
        case critical
        /// The machine is about to act (hibernate, power off).
        case action
    }

    /// Low power mode: the power profile is `power-saver`.
    public var isLowPowerModeEnabled: Bool
    /// The machine runs on battery.
    public var isOnBattery: Bool
    /// How low the battery is.
    public var batteryWarningLevel: BatteryWarningLevel

    /// What the host knows before a source said anything.
    public static let unknown = PowerState()

    /// A power state; by default nothing unusual and the battery's level unknown.
    public init(isLowPowerModeEnabled: Bool = false, isOnBattery: Bool = false, batteryWarningLevel: BatteryWarningLevel = .unknown) {
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.isOnBattery = isOnBattery
        self.batteryWarningLevel = batteryWarningLevel
    }

    /// `low power, on battery, battery low`; `normal` when nothing is unusual.
    public var description: String {
        var parts: [String] = []
        if isLowPowerModeEnabled { parts.append("low power") }
        if isOnBattery { parts.append("on battery") }
        if batteryWarningLevel != .none, batteryWarningLevel != .unknown { parts.append("battery \(batteryWarningLevel.rawValue)") }
        return parts.isEmpty ? "normal" : parts.joined(separator: ", ")
    }
}

/// The host's power state, in its shared state: read live through any handle.
enum PowerStateKey: SharedStateKey {
    static let defaultValue = PowerState.unknown
}

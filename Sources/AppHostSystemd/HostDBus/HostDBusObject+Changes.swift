import AppHost
import CSystemd
import Glibc

extension HostDBusObject {
    /// The properties whose value differs between `old` and `new`, in the vtable's order.
    static func changedProperties(from old: HostStatus, to new: HostStatus) -> [String] {
        var names: [String] = []
        if old.state != new.state { names.append("State") }
        if old.description != new.description { names.append("Status") }
        if (old.sessionLockReason != nil) != (new.sessionLockReason != nil) { names.append("SessionLocked") }
        if old.sessionLockReason != new.sessionLockReason { names.append("SessionLockReason") }
        if (old.healthProblem == nil) != (new.healthProblem == nil) { names.append("Healthy") }
        if old.healthProblem != new.healthProblem { names.append("HealthProblem") }
        if old.services != new.services { names.append("Services") }
        if old.networkPath.status != new.networkPath.status { names.append("Network") }
        if old.networkPath.isExpensive != new.networkPath.isExpensive { names.append("NetworkExpensive") }
        if old.powerState.isLowPowerModeEnabled != new.powerState.isLowPowerModeEnabled { names.append("LowPowerMode") }
        if old.powerState.isOnBattery != new.powerState.isOnBattery { names.append("OnBattery") }
        if old.powerState.batteryWarningLevel != new.powerState.batteryWarningLevel { names.append("BatteryWarningLevel") }
        return names
    }

    /// One `PropertiesChanged` for what a request changed since the last one said (or since
    /// Host1 was set up on this connection); sd-bus reads the values back through the vtable,
    /// and sends `Services` as invalidated. On the loop's thread.
    func announce(_ status: HostStatus, on bus: OpaquePointer) {
        guard isServed else { return }
        let names = Self.changedProperties(from: announced ?? status, to: status)
        announced = status
        guard !names.isEmpty else { return }
        var strings = names.map { strdup($0) } + [nil]
        defer { strings.forEach { free($0) } }
        _ = sd_bus_emit_properties_changed_strv(bus, "/org/apphost/Host", "org.apphost.Host1", &strings)
    }
}

import AppHost
import CAppHostShims
import CSystemd
import Glibc

/// `org.apphost.Host1` at `/org/apphost/Host` on one connection: its properties read from the
/// host's published status, its methods handed to Swift (`calls`) and answered later on the
/// loop's thread (`HostDBusCall.answer`). On the loop's thread only.
final class HostDBusObject: @unchecked Sendable {
    let host: PluggableApplicationHost
    let calls: AsyncStream<HostDBusCall>.Continuation

    init(host: PluggableApplicationHost, calls: AsyncStream<HostDBusCall>.Continuation) {
        self.host = host
        self.calls = calls
    }

    /// The vtable on the current connection.
    private var slot: OpaquePointer?
    /// The status the last `PropertiesChanged` described (or the one at the set-up).
    var announced: HostStatus?
    /// Host1 is on the current connection.
    var isServed: Bool { slot != nil }

    /// Adds the vtable to `bus`, in place of the last connection's.
    func setUp(_ bus: OpaquePointer) -> Int32 {
        leave()
        var slot: UnsafeMutableRawPointer?
        let context = Unmanaged.passUnretained(self).toOpaque()
        let result = apphost_host_dbus_add(UnsafeMutableRawPointer(bus), &slot, context, { context, property, reply in
            Unmanaged<HostDBusObject>.fromOpaque(context!).takeUnretainedValue().append(String(cString: property!), to: OpaquePointer(reply!))
        }, { context, member, call in
            Unmanaged<HostDBusObject>.fromOpaque(context!).takeUnretainedValue().received(String(cString: member!), OpaquePointer(call!))
        })
        guard result >= 0 else { return result }
        self.slot = OpaquePointer(slot)
        announced = host.status
        return 0
    }

    /// Takes the vtable off the connection: Host1 is no longer served there.
    func leave() {
        if let slot { sd_bus_slot_unref(slot) }
        slot = nil
    }

    private func append(_ property: String, to reply: OpaquePointer) -> Int32 {
        let status = host.status
        switch property {
        case "State": return Self.append(string: status.state.rawValue, to: reply)
        case "Status": return Self.append(string: status.description, to: reply)
        case "SessionLocked": return Self.append(bool: status.sessionLockReason != nil, to: reply)
        case "SessionLockReason": return Self.append(string: status.sessionLockReason ?? "", to: reply)
        case "Healthy": return Self.append(bool: status.healthProblem == nil, to: reply)
        case "HealthProblem": return Self.append(string: status.healthProblem ?? "", to: reply)
        case "Services": return Self.append(services: status.services, to: reply)
        case "Network": return Self.append(string: status.networkPath.status.rawValue, to: reply)
        case "NetworkExpensive": return Self.append(bool: status.networkPath.isExpensive, to: reply)
        case "LowPowerMode": return Self.append(bool: status.powerState.isLowPowerModeEnabled, to: reply)
        case "OnBattery": return Self.append(bool: status.powerState.isOnBattery, to: reply)
        case "BatteryWarningLevel": return Self.append(string: status.powerState.batteryWarningLevel.rawValue, to: reply)
        default: return -ENOENT
        }
    }

    /// `a(ssbssusts)`: name, type, required, state, health, restarts, last error, inside its
    /// hook since (µs since 1970; 0: not inside one past its deadline), that hook.
    private static func append(services: [ServiceHealth], to reply: OpaquePointer) -> Int32 {
        var result = sd_bus_message_open_container(reply, CChar(UInt8(ascii: "a")), "(ssbssusts)")
        let now = (continuous: ContinuousClock.now, realtime: realtimeMicroseconds())
        for service in services where result >= 0 {
            result = sd_bus_message_open_container(reply, CChar(UInt8(ascii: "r")), "ssbssusts")
            var since: UInt64 = 0
            if let busy = service.busySince {
                since = UInt64(max(0, now.realtime - (now.continuous - busy).microseconds))
            }
            var restarts = UInt32(clamping: service.restarts)
            if result >= 0 { result = append(string: service.name, to: reply) }
            if result >= 0 { result = append(string: service.type, to: reply) }
            if result >= 0 { result = append(bool: service.isRequired, to: reply) }
            if result >= 0 { result = append(string: HostDBusServiceState(service).rawValue, to: reply) }
            if result >= 0 { result = append(string: HostDBusServiceState.health(of: service), to: reply) }
            if result >= 0 { result = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "u")), &restarts) }
            if result >= 0 { result = append(string: service.lastError ?? "", to: reply) }
            if result >= 0 { result = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "t")), &since) }
            if result >= 0 { result = append(string: service.busyHook ?? "", to: reply) }
            if result >= 0 { result = sd_bus_message_close_container(reply) }
        }
        if result >= 0 { result = sd_bus_message_close_container(reply) }
        return result
    }

    static func append(string: String, to message: OpaquePointer) -> Int32 {
        string.withCString { sd_bus_message_append_basic(message, CChar(UInt8(ascii: "s")), $0) }
    }

    static func append(bool: Bool, to message: OpaquePointer) -> Int32 {
        var value: Int32 = bool ? 1 : 0
        return sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value)
    }

    static func realtimeMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// A method call: read its argument, keep the message, and hand it to Swift.
    private func received(_ member: String, _ message: OpaquePointer) -> Int32 {
        var argument: String?
        if member == "RestartService" {
            var text: UnsafePointer<CChar>?
            let result = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &text)
            guard result >= 0, let text else { return result < 0 ? result : -EINVAL }
            argument = String(cString: text)
        }
        sd_bus_message_ref(message)
        if case .terminated = calls.yield(HostDBusCall(member: member, argument: argument, message: message)) {
            sd_bus_message_unref(message)
            return -ESHUTDOWN
        }
        return 1
    }
}

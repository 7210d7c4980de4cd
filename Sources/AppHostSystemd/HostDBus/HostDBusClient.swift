import AppHost
import AppHostSupport
import CSystemd
import Glibc

/// The client side of `org.apphost.Host1`, for `apphostd status` and `apphostd restart`: one
/// connection, blocking calls through sd-bus (`GetAll` and the methods, with `sd_bus_call`).
package struct HostDBusClient: ~Copyable {
    /// What the daemon says about itself.
    package struct Report: Sendable, Equatable {
        /// One service's line.
        package struct Service: Sendable, Equatable {
            package var name: String
            package var type: String
            package var isRequired: Bool
            package var state: String
            package var health: String
            package var restarts: UInt32
            package var lastError: String
            /// µs since 1970 while it is inside `hook` past its deadline; 0 otherwise.
            package var inHookSince: UInt64
            package var hook: String

            /// A line as given.
            package init(name: String, type: String, isRequired: Bool, state: String, health: String, restarts: UInt32, lastError: String, inHookSince: UInt64, hook: String) {
                (self.name, self.type, self.isRequired, self.state, self.health) = (name, type, isRequired, state, health)
                (self.restarts, self.lastError, self.inHookSince, self.hook) = (restarts, lastError, inHookSince, hook)
            }
        }

        package var state: String
        package var status: String
        package var sessionLocked: Bool
        package var sessionLockReason: String
        package var healthy: Bool
        package var healthProblem: String
        package var services: [Service]
        /// The network path: available, unavailable or unknown (also from a daemon older than
        /// the property).
        package var network = "unknown"
        package var networkExpensive = false
        package var lowPowerMode = false
        package var onBattery = false
        /// unknown, none, discharging, low, critical or action.
        package var batteryWarningLevel = "unknown"

        /// A report as given.
        package init(state: String, status: String, sessionLocked: Bool, sessionLockReason: String, healthy: Bool, healthProblem: String, services: [Service]) {
            (self.state, self.status, self.sessionLocked, self.sessionLockReason) = (state, status, sessionLocked, sessionLockReason)
            (self.healthy, self.healthProblem, self.services) = (healthy, healthProblem, services)
        }
    }

    /// Why a call failed: what the bus said, and its D-Bus error name when it had one.
    package struct Failure: Error, CustomStringConvertible {
        package let name: String?
        package let message: String
        /// The errno of a bus that could not be reached at all (no socket, no address), else nil.
        package var unreachable: Int32? = nil
        package var description: String { message }
    }

    static let path = "/org/apphost/Host"
    static let interface = "org.apphost.Host1"

    let bus: OpaquePointer
    let busName: String

    /// Connects to `bus`: `.system` or `.user` as `systemctl`'s `--system` (the commands'
    /// default: `sd_bus_open`'s own choice would be a login session's user bus, also under
    /// `sudo`) and `--user`.
    package init(busName: String, bus which: DBusAddress) throws(Failure) {
        var made: OpaquePointer?
        var result: Int32
        switch which {
        case .default: result = sd_bus_open(&made)
        case .user: result = sd_bus_open_user(&made)
        case .system: result = sd_bus_open_system(&made)
        case .address(let text):
            result = sd_bus_new(&made)
            if result >= 0 { result = sd_bus_set_address(made, text) }
            if result >= 0 { result = sd_bus_set_bus_client(made, 1) }
            if result >= 0 { result = sd_bus_start(made) }
            if result < 0, let opened = made { sd_bus_unref(opened) }
        }
        guard result >= 0, let made else {
            throw Failure(name: nil, message: SystemErrorText.reason(-result), unreachable: -result)
        }
        bus = made
        self.busName = busName
    }

    deinit {
        sd_bus_flush_close_unref(bus)
    }

    /// Every Host1 property, in one `GetAll`.
    package func report() throws(Failure) -> Report {
        var call: OpaquePointer?
        var result = sd_bus_message_new_method_call(bus, &call, busName, Self.path, "org.freedesktop.DBus.Properties", "GetAll")
        guard result >= 0, let call else { throw Failure(name: nil, message: "cannot make the call: \(SystemErrorText.reason(-result))") }
        defer { sd_bus_message_unref(call) }
        result = Self.interface.withCString { sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
        guard result >= 0 else { throw Failure(name: nil, message: "cannot make the call: \(SystemErrorText.reason(-result))") }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var answer: OpaquePointer?
        result = sd_bus_call(bus, call, 0, &error, &answer)
        guard result >= 0, let reply = answer else { throw Self.failure(error, result) }
        defer { sd_bus_message_unref(reply) }
        return try Self.report(from: reply)
    }

    /// The report a `GetAll` reply holds; every property must be there.
    static func report(from reply: OpaquePointer) throws(Failure) -> Report {
        var report = Report(state: "", status: "", sessionLocked: false, sessionLockReason: "", healthy: false, healthProblem: "", services: [])
        var seen: Set<String> = []
        let unreadable = Failure(name: nil, message: "the daemon's properties could not be read")
        guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "a")), "{sv}") >= 0 else { throw unreadable }
        while true {
            let entry = sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "e")), "sv")
            guard entry >= 0 else { throw unreadable }
            if entry == 0 { break }
            guard let key = DBusMessage.readString(reply) else { throw unreadable }
            switch key {
            case "State", "Status", "SessionLockReason", "HealthProblem", "Network", "BatteryWarningLevel":
                guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "s") >= 0, let value = DBusMessage.readString(reply) else { throw unreadable }
                switch key {
                case "State": report.state = value
                case "Status": report.status = value
                case "SessionLockReason": report.sessionLockReason = value
                case "Network": report.network = value
                case "BatteryWarningLevel": report.batteryWarningLevel = value
                default: report.healthProblem = value
                }
            case "SessionLocked", "Healthy", "NetworkExpensive", "LowPowerMode", "OnBattery":
                var value: Int32 = 0
                guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "b") >= 0,
                    sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "b")), &value) >= 0
                else { throw unreadable }
                switch key {
                case "Healthy": report.healthy = value != 0
                case "NetworkExpensive": report.networkExpensive = value != 0
                case "LowPowerMode": report.lowPowerMode = value != 0
                case "OnBattery": report.onBattery = value != 0
                default: report.sessionLocked = value != 0
                }
            case "Services":
                guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "a(ssbssusts)") >= 0 else { throw unreadable }
                report.services = try services(from: reply)
            default:
                // A newer daemon's property: not this client's business.
                guard sd_bus_message_skip(reply, "v") >= 0, sd_bus_message_exit_container(reply) >= 0 else { throw unreadable }
                continue
            }
            guard sd_bus_message_exit_container(reply) >= 0, sd_bus_message_exit_container(reply) >= 0 else { throw unreadable }
            seen.insert(key)
        }
        let missing = ["State", "Status", "SessionLocked", "SessionLockReason", "Healthy", "HealthProblem", "Services"].filter { !seen.contains($0) }
        guard missing.isEmpty else {
            throw Failure(name: nil, message: "the daemon's answer lacks \(missing.joined(separator: ", ")) (an older apphostd?)")
        }
        return report
    }

    /// Calls `RestartService(name)`, waiting up to `timeout` (a restart runs launch hooks).
    package func restartService(_ name: String, timeout: Duration) throws(Failure) {
        var call: OpaquePointer?
        var result = sd_bus_message_new_method_call(bus, &call, busName, Self.path, Self.interface, "RestartService")
        guard result >= 0, let call else { throw Failure(name: nil, message: "cannot make the call: \(SystemErrorText.reason(-result))") }
        defer { sd_bus_message_unref(call) }
        result = name.withCString { sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
        guard result >= 0 else { throw Failure(name: nil, message: "cannot make the call: \(SystemErrorText.reason(-result))") }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        result = sd_bus_call(bus, call, UInt64(timeout.microseconds), &error, &reply)
        sd_bus_message_unref(reply)
        if result < 0 { throw Self.failure(error, result) }
    }

    /// The `a(ssbssusts)` array at the reply's position, read to its end.
    private static func services(from reply: OpaquePointer) throws(Failure) -> [Report.Service] {
        let unreadable = Failure(name: nil, message: "the daemon's Services property could not be read")
        guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "a")), "(ssbssusts)") >= 0 else { throw unreadable }
        var services: [Report.Service] = []
        while true {
            let result = sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "r")), "ssbssusts")
            guard result >= 0 else { throw unreadable }
            if result == 0 { break }
            var service = Report.Service(name: "", type: "", isRequired: false, state: "", health: "", restarts: 0, lastError: "", inHookSince: 0, hook: "")
            var required: Int32 = 0
            guard let name = DBusMessage.readString(reply), let type = DBusMessage.readString(reply),
                sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "b")), &required) >= 0,
                let state = DBusMessage.readString(reply), let health = DBusMessage.readString(reply),
                sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "u")), &service.restarts) >= 0,
                let lastError = DBusMessage.readString(reply),
                sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "t")), &service.inHookSince) >= 0,
                let hook = DBusMessage.readString(reply),
                sd_bus_message_exit_container(reply) >= 0
            else { throw unreadable }
            (service.name, service.type, service.isRequired, service.state, service.health, service.lastError, service.hook) = (name, type, required != 0, state, health, lastError, hook)
            services.append(service)
        }
        guard sd_bus_message_exit_container(reply) >= 0 else { throw unreadable }
        return services
    }

    private static func failure(_ error: sd_bus_error, _ result: Int32) -> Failure {
        if let name = error.name {
            return Failure(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? SystemErrorText.reason(-result))
        }
        return Failure(name: nil, message: SystemErrorText.reason(-result))
    }
}

import CAppHostShims
import CSystemd
import Glibc
import Logging
import ServiceLifecycle

/// `org.freedesktop.LogControl1` on the bus, as systemd's own daemons have it, so that
/// `systemctl service-log-level UNIT [LEVEL]` and `systemctl service-log-target UNIT [TARGET]`
/// (systemd 247+) read and change the daemon's log level and target live. Run it in the
/// daemon's `ServiceGroup`.
///
/// It owns a well-known name (the unit's `BusName=`, which systemctl reads) on the bus sd-bus
/// picks for the process: the user bus under a user manager, else the system bus. `LogLevel`
/// takes systemd's names (`debug`, `info`, `notice`, `warning`, `err`, `crit`, `alert`,
/// `emerg`, or 0–7) and sets `LogLevelControl.level`; `LogTarget` takes `console`, `journal`,
/// `auto` and `null`. Writes need the caller's privilege, which sd-bus checks before the value
/// reaches the daemon: root, or the daemon's own user; anyone on a user bus, which only its
/// user can reach. Without a bus, or without the right to the name, the daemon runs on and the
/// log says once why.
public struct LogControlService: Service {
    /// Which bus to own the name on.
    public enum Bus: Sendable {
        /// sd-bus' choice for the process (`sd_bus_open`): the user bus in a user's session or
        /// under a user manager, else the system bus.
        case `default`
        /// A bus at this D-Bus address (tests' private dbus-daemon).
        case address(String)
    }

    /// The well-known name it owns (`BusName=` in the unit).
    public let busName: String
    /// `SyslogIdentifier`: the daemon's journal identifier.
    public let identifier: String
    let control: LogLevelControl
    let bus: Bus
    let logger: Logger

    /// A service that owns `busName` and serves `control` through it.
    public init(busName: String, identifier: String, control: LogLevelControl = .shared, bus: Bus = .default, logger: Logger) {
        self.busName = busName
        self.identifier = identifier
        self.control = control
        self.bus = bus
        self.logger = logger
    }

    /// `org.apphost.<name>` for a daemon's command name (`apphostd` → `org.apphost.apphostd`):
    /// each daemon of its own name owns a name of its own. Characters a bus name cannot hold
    /// become `_`.
    public static func busName(commandName: String) -> String {
        var element = String(commandName.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-") ? Character(scalar) : "_"
        })
        if element.first.map({ ("0"..."9").contains($0) }) ?? true { element = "_" + element }
        return "org.apphost." + element
    }

    /// Serves the interface until graceful shutdown or cancellation.
    ///
    /// The connection lives on a thread of its own, blocked in `poll()` on the bus and a wake
    /// fd: an idle daemon's bus costs no wake-up (a Dispatch read source woke the process about
    /// twice as often, through libdispatch's worker threads).
    public func run() async {
        let wake: WakeEventFD
        do {
            wake = try WakeEventFD()
        } catch {
            logger.notice("log control unavailable (systemctl service-log-level cannot reach this daemon): \(error)")
            return
        }
        let (ends, ended) = AsyncStream<Void>.makeStream()
        let opened: Result<Void, Failure> = await withCheckedContinuation { opening in
            let bus = bus, busName = busName, identifier = identifier, control = control, logger = logger
            let started = PollThread.start(name: "apphost-logctl") {
                defer { ended.finish() }
                let connection: Connection
                do throws(Failure) {
                    connection = try Connection(bus: bus, busName: busName, identifier: identifier, control: control, logger: logger)
                } catch {
                    opening.resume(returning: .failure(error))
                    return
                }
                opening.resume(returning: .success(()))
                connection.serve(until: wake)
                connection.close()
            }
            if started != 0 { opening.resume(returning: .failure(Failure(step: "no thread for the bus", code: started))) }
        }
        if case .failure(let failure) = opened {
            logger.notice("log control unavailable (systemctl service-log-level cannot reach this daemon): \(failure)")
            return
        }
        logger.debug("log control on the bus as \(busName)")
        try? await gracefulShutdown()
        wake.wake()
        for await _ in ends {}
    }

    /// Why the bus or the name cannot be had.
    struct Failure: Error, CustomStringConvertible {
        let step: String
        let code: Int32
        /// Said instead of the errno's text (the loader's own reason).
        var detail: String? = nil
        var description: String { "\(step): \(detail ?? SystemErrorText.reason(code))" }
    }

    /// The open connection; touched only by the thread that made it.
    final class Connection {
        private var bus: OpaquePointer?
        private var slot: UnsafeMutableRawPointer?
        private let properties: Properties
        private let logger: Logger

        init(bus kind: Bus, busName: String, identifier: String, control: LogLevelControl, logger: Logger) throws(Failure) {
            self.logger = logger
            properties = Properties(identifier: identifier, control: control)
            // sd_bus_open would find nothing: said without loading libsystemd at all.
            if case .default = kind, !Self.mayHaveBus() { throw Failure(step: "no bus (sd_bus_open)", code: ENOENT) }
            if let failure = apphost_sd_bus_load_failure() {
                throw Failure(step: "sd-bus cannot be loaded", code: ENOSYS, detail: String(cString: failure))
            }
            var bus: OpaquePointer?
            switch kind {
            case .default:
                let r = sd_bus_open(&bus)
                guard r >= 0 else { throw Failure(step: "no bus (sd_bus_open)", code: -r) }
            case .address(let address):
                var r = sd_bus_new(&bus)
                if r >= 0 { r = sd_bus_set_address(bus, address) }
                if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
                if r >= 0 { r = sd_bus_start(bus) }
                guard r >= 0 else {
                    sd_bus_unref(bus)
                    throw Failure(step: "no bus at \(address)", code: -r)
                }
            }
            self.bus = bus
            var slot: UnsafeMutableRawPointer?
            let context = Unmanaged.passUnretained(properties).toOpaque()
            var r = apphost_log_control_add(UnsafeMutableRawPointer(bus), &slot, context, { context, property in
                Unmanaged<Properties>.fromOpaque(context!).takeUnretainedValue().value(of: String(cString: property!))
            }, { context, property, value in
                Unmanaged<Properties>.fromOpaque(context!).takeUnretainedValue().set(String(cString: property!), to: String(cString: value!))
            })
            guard r >= 0 else {
                close()
                throw Failure(step: "org.freedesktop.LogControl1 not added", code: -r)
            }
            self.slot = slot
            r = sd_bus_request_name(bus, busName, 0)
            guard r >= 0 else {
                close()
                switch -r {
                case ENOTCONN, ECONNRESET:
                    // dbus-daemon drops a connection whose uid it cannot resolve: a DynamicUser=.
                    throw Failure(step: "the bus dropped the connection (dbus-daemon cannot resolve a DynamicUser='s uid: run as a system user, as the shipped unit does)", code: -r)
                case EEXIST:
                    throw Failure(step: "another process owns \(busName)", code: -r)
                default:
                    throw Failure(step: "the name \(busName) is not ours (sd_bus_request_name; a D-Bus policy must let this user own it, as deploy/dbus/org.apphost.apphostd.conf does for the shipped unit)", code: -r)
                }
            }
        }

        /// Whether `sd_bus_open` could find a bus: an address in the environment, or the system
        /// bus's or the user's bus socket in its place (sd-bus(3)'s search).
        static func mayHaveBus() -> Bool {
            for name in ["DBUS_STARTER_ADDRESS", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"] {
                if let value = getenv(name), value.pointee != 0 { return true }
            }
            if access("/run/dbus/system_bus_socket", F_OK) == 0 { return true }
            if let runtime = getenv("XDG_RUNTIME_DIR"), access(String(cString: runtime) + "/bus", F_OK) == 0 { return true }
            return false
        }

        /// Answers calls until `wake` is woken or the bus goes away.
        func serve(until wake: WakeEventFD) {
            while let bus {
                var r: Int32
                repeat { r = sd_bus_process(bus, nil) } while r > 0
                if r < 0 {
                    logger.notice("log control: the bus connection ended: \(SystemErrorText.reason(-r))")
                    return
                }
                _ = sd_bus_flush(bus)
                var fds = [
                    pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                    pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
                ]
                var timeout: UInt64 = 0
                let milliseconds: Int32 = sd_bus_get_timeout(bus, &timeout) > 0 && timeout != UInt64.max
                    ? Int32(clamping: (timeout &- min(timeout, Self.monotonicMicroseconds())) / 1000 + 1)
                    : -1
                if poll(&fds, nfds_t(fds.count), milliseconds) < 0, errno != EINTR { return }
                if fds[1].revents != 0 { return }
            }
        }

        private static func monotonicMicroseconds() -> UInt64 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        }

        func close() {
            if let slot { sd_bus_slot_unref(OpaquePointer(slot)) }
            slot = nil
            if let bus { sd_bus_flush_close_unref(bus) }
            bus = nil
        }
    }

    /// The properties' values, as systemd spells them; the C side holds the returned text until
    /// its next call.
    final class Properties {
        let identifier: String
        let control: LogLevelControl
        private var text: UnsafeMutablePointer<CChar>?

        init(identifier: String, control: LogLevelControl) {
            self.identifier = identifier
            self.control = control
        }

        deinit {
            free(text)
        }

        func value(of property: String) -> UnsafePointer<CChar>? {
            let value: String
            switch property {
            case "LogLevel": value = Self.systemdName(of: control.level)
            case "LogTarget": value = control.target.rawValue
            default: value = identifier
            }
            free(text)
            text = strdup(value)
            return UnsafePointer(text)
        }

        func set(_ property: String, to value: String) -> Int32 {
            switch property {
            case "LogLevel":
                guard let level = Self.level(systemdName: value) else { return -EINVAL }
                control.level = level
            case "LogTarget":
                guard let target = LogLevelControl.Target(rawValue: value) else { return -EINVAL }
                control.target = target
            default:
                return -EINVAL
            }
            return 0
        }

        /// systemd's name of a swift-log level (`trace` has none: `debug`).
        static func systemdName(of level: Logger.Level) -> String {
            switch level {
            case .trace, .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "err"
            case .critical: "crit"
            }
        }

        /// The swift-log level of a systemd level name or number (syslog's 0–7).
        static func level(systemdName name: String) -> Logger.Level? {
            switch name {
            case "emerg", "alert", "crit", "0", "1", "2": .critical
            case "err", "3": .error
            case "warning", "4": .warning
            case "notice", "5": .notice
            case "info", "6": .info
            case "debug", "7": .debug
            default: nil
            }
        }
    }
}

import Glibc
import Logging
import ServiceLifecycle
import SystemPackage

/// `org.freedesktop.LogControl1` on the bus, as systemd's own daemons have it, so that
/// `systemctl service-log-level UNIT [LEVEL]` and `systemctl service-log-target UNIT [TARGET]`
/// (systemd 247+) read and change the daemon's log level and target live. Run it in the
/// daemon's `ServiceGroup`.
///
/// It owns a well-known name (the unit's `BusName=`, which systemctl reads) on the bus
/// `sd_bus_open` would pick for the process: the user bus under a user manager, else the system
/// bus. `LogLevel` takes systemd's names (`debug`, `info`, `notice`, `warning`, `err`, `crit`,
/// `alert`, `emerg`, or 0–7) and sets `LogLevelControl.level`; `LogTarget` takes `console`,
/// `journal`, `auto` and `null`. A write needs root or the daemon's own user, anyone on a user
/// bus, which only its user can reach (`LogControlObject`). Without a bus, or without the right
/// to the name, the daemon runs on and the log says once why.
public struct LogControlService: Service {
    /// Which bus to own the name on.
    public enum Bus: Sendable {
        /// `sd_bus_open`'s choice for the process: the user bus in a user's session or under a
        /// user manager, else the system bus (`BusAddress.processDefault`).
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
    /// twice as often, through libdispatch's worker threads). A shutdown wakes it whether it is
    /// serving or still connecting, so a bus that never answers does not hold up the stop.
    public func run() async {
        let wake: WakeEventFD
        do {
            wake = try WakeEventFD()
        } catch {
            logger.notice("log control unavailable (systemctl service-log-level cannot reach this daemon): \(error)")
            return
        }
        let (events, sink) = AsyncStream<Result<Void, Failure>>.makeStream()
        let bus = bus, busName = busName, identifier = identifier, control = control, logger = logger
        let started = PollThread.start(name: "apphost-logctl") {
            defer { sink.finish() }
            let connection: Connection
            do throws(Failure) {
                connection = try Connection(bus: bus, busName: busName, identifier: identifier, control: control, logger: logger, cancel: wake)
            } catch {
                if !error.isCancellation { sink.yield(.failure(error)) }
                return
            }
            sink.yield(.success(()))
            connection.serve()
            connection.close()
        }
        guard started == 0 else {
            logger.notice("log control unavailable (systemctl service-log-level cannot reach this daemon): no thread for the bus: \(SystemErrorText.reason(started))")
            return
        }
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                for await event in events {
                    switch event {
                    case .success: logger.debug("log control on the bus as \(busName)")
                    case .failure(let failure): logger.notice("log control unavailable (systemctl service-log-level cannot reach this daemon): \(failure)")
                    }
                }
            } onGracefulShutdown: {
                wake.wake()
            }
        } onCancel: {
            wake.wake()
        }
    }

    /// Why the bus or the name cannot be had.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// The wait was ended by a shutdown: nothing to tell.
        var isCancellation = false

        init(_ description: String) {
            self.description = description
        }

        init(_ error: BusError, busName: String) {
            isCancellation = error == .cancelled
            switch error {
            case .ended:
                // dbus-daemon drops a connection whose uid it cannot resolve: a DynamicUser=.
                description = "\(error) (dbus-daemon cannot resolve a DynamicUser='s uid: run as a system user, as the shipped unit does)"
            case .replied(let name, _) where name == "org.freedesktop.DBus.Error.AccessDenied":
                description = "the name \(busName) is not ours (\(error); a D-Bus policy must let this user own it, as deploy/dbus/org.apphost.apphostd.conf does for the shipped unit)"
            default:
                description = "\(error)"
            }
        }
    }

    /// The open connection; touched only by the thread that made it.
    final class Connection {
        private let bus: BusConnection
        private let object: LogControlObject
        private let logger: Logger
        /// Writes waiting for their caller's uid, by the serial of the query that asks for it.
        private var writesAwaitingCaller: [UInt32: LogControlObject.PendingWrite] = [:]

        /// Connects, then owns `busName`, within 25 seconds (sd-bus's call timeout), unless
        /// `cancel` is woken first.
        init(bus kind: Bus, busName: String, identifier: String, control: LogLevelControl, logger: Logger, cancel: WakeEventFD) throws(Failure) {
            self.logger = logger
            let deadline = ContinuousClock.now + .seconds(25)
            let owner: UInt32
            do throws(BusError) {
                let address = switch kind {
                case .default: try BusAddress.processDefault(environment: ProcessEnvironment.current, cgroupPath: OwnCgroup.pathBelowManager())
                case .address(let text): try BusAddress(text)
                }
                bus = try BusConnection(address: address, until: deadline, cancel: cancel.fd)
                object = LogControlObject(identifier: identifier, control: control, trustsEveryCaller: address.isUserBus, ownUID: geteuid())
                owner = try bus.requestName(busName, until: deadline)
            } catch {
                throw Failure(error, busName: busName)
            }
            switch owner {
            case 1, 4: break
            case 3: throw Failure("another process owns \(busName)")
            case let code: throw Failure("the name \(busName) is not ours (RequestName answered \(code))")
            }
        }

        /// Answers calls until the wake fd given at `init` is woken or the bus goes away.
        func serve() {
            do throws(BusError) {
                while true {
                    while let message = try bus.nextMessage() { try handle(message) }
                    try bus.waitForInput()
                }
            } catch .cancelled {
                return
            } catch {
                logger.notice("log control: the bus connection ended: \(error)")
            }
        }

        private func handle(_ message: BusMessage) throws(BusError) {
            if message.kind == .methodReturn || message.kind == .error, message.sender == BusConnection.driver,
               let serial = message.replySerial, let write = writesAwaitingCaller.removeValue(forKey: serial) {
                var reader = message.bodyReader
                let uid = message.kind == .methodReturn ? try? reader.uint32() : nil
                if let reply = object.complete(write, callerUID: uid) { try bus.send(reply) }
                return
            }
            switch object.handle(message) {
            case .reply(let reply):
                try bus.send(reply)
            case .askCallerUID(let write):
                writesAwaitingCaller[try bus.send(LogControlObject.callerUIDQuery(for: write))] = write
            case .none:
                break
            }
        }

        func close() {
            bus.close()
        }
    }
}

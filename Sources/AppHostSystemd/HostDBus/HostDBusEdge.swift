import AppHost
import AppHostSupport
import Glibc
import Logging
import ServiceLifecycle

/// The daemon on its bus name: `org.freedesktop.LogControl1` (as `LogControlEdge`) and
/// `org.apphost.Host1` at `/org/apphost/Host`, one connection and one name, through sd-bus on the
/// edge's event loop. Run it in the daemon's `ServiceGroup`.
///
/// Host1's properties (`State`, `Status`, `SessionLocked`, `SessionLockReason`, `Healthy`,
/// `HealthProblem`, `Services`) are anyone's to read; its methods (`RestartService(s)`,
/// `EnterBackground()`, `EnterForeground()`) follow LogControl1's privilege rule: on the system
/// bus root and the daemon's own user, on a user's bus its user. `apphostd status` and `apphostd
/// restart` are its clients; deploy/dbus/org.apphost.Host1.xml is its introspection.
public struct HostDBusEdge: Service {
    /// The well-known name it owns (`BusName=` in the unit).
    public let busName: String
    /// `SyslogIdentifier`: the daemon's journal identifier.
    public let identifier: String
    let host: PluggableApplicationHost?
    let control: LogLevelControl
    let bus: DBusAddress
    let logger: Logger
    /// The edge's loop; nil: a loop of its own.
    let loop: EdgeEventLoop?
    /// What `Reload()` does (the daemon's SIGHUP reload): whether it was applied, and what it
    /// says; nil: `Reload()` answers `org.apphost.Host1.Error.NotSupported`.
    let reload: (@Sendable () async -> (applied: Bool, message: String))?

    /// Serves `host` and `control` at `busName`, on an event loop of its own.
    public init(busName: String, identifier: String, host: PluggableApplicationHost, control: LogLevelControl = .shared, bus: DBusAddress = .default, logger: Logger) {
        self.init(busName: busName, identifier: identifier, host: host, control: control, bus: bus, logger: logger, on: nil)
    }

    /// Like `init(busName:identifier:host:control:bus:logger:)`, on `loop` (the daemon's edge
    /// loop); without `host`, LogControl1 alone. `AfterLaunch` keeps it off the way to
    /// `READY=1`.
    package init(
        busName: String, identifier: String, host: PluggableApplicationHost?, control: LogLevelControl = .shared, bus: DBusAddress = .default,
        logger: Logger, on loop: EdgeEventLoop?,
        reload: (@Sendable () async -> (applied: Bool, message: String))? = nil
    ) {
        self.reload = reload
        self.busName = busName
        self.identifier = identifier
        self.host = host
        self.control = control
        self.bus = bus
        self.logger = logger
        self.loop = loop
    }

    var unavailable: String {
        host == nil
            ? "log control unavailable (systemctl service-log-level cannot reach this daemon)"
            : "log control unavailable (systemctl service-log-level cannot reach this daemon, nor \(identifier) status)"
    }

    /// Serves until graceful shutdown or cancellation. The connection lives on the event loop,
    /// which sleeps without a timer: an idle daemon's bus costs no wake-up.
    public func run() async {
        let loop: EdgeEventLoop
        let ownLoop: Bool
        do {
            if let shared = self.loop {
                loop = shared
                ownLoop = false
            } else {
                loop = try EdgeEventLoop(name: "apphost-logctl")
                ownLoop = true
            }
        } catch {
            logger.notice("\(unavailable): \(error)")
            return
        }
        let (reports, sink) = AsyncStream<HostDBusServer.Report>.makeStream()
        let (calls, callSink) = AsyncStream<HostDBusCall>.makeStream()
        let object = host.map { HostDBusObject(host: $0, calls: callSink) }
        let server = HostDBusServer(busName: busName, properties: LogControlProperties(identifier: identifier, control: control), host: object, reports: sink)
        let member = DBusConnection.Member(setUp: server.setUp, onEvent: server.connectionChanged, leave: server.leave)
        server.member = member
        let connection: DBusConnection
        do {
            connection = try DBusConnection.join(bus, member: member, on: loop, endsLoop: ownLoop)
        } catch {
            logger.notice("\(unavailable): no bus \(bus.place): \(SystemErrorText.reason(error.rawValue))")
            sink.finish()
            callSink.finish()
            return
        }
        let stop: @Sendable () -> Void = {
            // The connection stays while logind's client is on it.
            loop.perform { connection.leave(member) }
            sink.finish()
            callSink.finish()
        }
        // Each request that changed the status: one PropertiesChanged, on the loop's thread.
        let observer = host.map { host in
            host.observeStatusChanges { [object] status in
                loop.perform { if let bus = connection.bus { object?.announce(status, on: bus) } }
            }
        }
        defer { if let host, let observer { host.stopObservingStatusChanges(observer) } }
        await withTaskCancellationOrGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                if let host {
                    group.addTask {
                        // Each call on a task of its own: one that waits (a reload, a
                        // restart's launch hooks) holds up no other; the host orders them.
                        await withDiscardingTaskGroup { each in
                            for await call in calls {
                                each.addTask {
                                    if call.member == "Reload" {
                                        await self.reload(call, loop: loop, connection: connection)
                                        return
                                    }
                                    let answer = await Self.perform(call, on: host, logger: logger)
                                    loop.perform { call.answer(answer) }
                                }
                            }
                        }
                    }
                }
                await follow(reports, loop: loop, connection: connection, stop: stop)
                callSink.finish()
            }
        } onCancelOrGracefulShutdown: {
            stop()
        }
    }

    private func follow(_ reports: AsyncStream<HostDBusServer.Report>, loop: EdgeEventLoop, connection: DBusConnection, stop: () -> Void) async {
        for await report in reports {
            switch report {
            case .owned(let again):
                if again {
                    logger.notice("log control: back on the bus as \(busName)")
                } else {
                    logger.debug("log control on the bus as \(busName)")
                }
            case .unavailable(let reason):
                logger.notice("\(unavailable): \(reason)")
                stop()
            case .lost(let reason):
                logger.notice("log control: lost the bus (\(reason)); connecting again")
            case .retrying(let reason, let wait):
                logger.debug("log control: cannot reach the bus yet (\(reason)); trying again in \(wait)")
            }
        }
    }

    /// `Reload()`: answers at once with the reload's id (a reload can outlast a caller's
    /// timeout), then `ReloadFinished(id, applied, message)` says how it ended. Its outcome is
    /// not written where `apphostd reload` waits for a SIGHUP's, so neither takes the other's.
    private func reload(_ call: HostDBusCall, loop: EdgeEventLoop, connection: DBusConnection) async {
        guard let reload else {
            loop.perform { call.answer(.failure(.named("NotSupported", "this daemon has no reload"))) }
            return
        }
        let id = "reload-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        loop.perform { call.answer(.success(id)) }
        logger.notice("reload asked on the bus (\(id))", metadata: ["reload_id": "\(id)"])
        let (applied, message) = await reload()
        loop.perform {
            if let bus = connection.bus { HostDBusCall.emitReloadFinished(on: bus, id: id, applied: applied, message: message) }
        }
    }

    /// Carries out one Host1 call on the host.
    static func perform(_ call: HostDBusCall, on host: PluggableApplicationHost, logger: Logger) async -> Result<String?, HostDBusCall.Failure> {
        switch call.member {
        case "RestartService":
            let name = call.argument ?? ""
            logger.notice("restart of \(name) asked on the bus", metadata: ["service": "\(name)"])
            do {
                try await host.restartService(named: name)
                return .success(nil)
            } catch {
                let suffix = switch error.code {
                case .noSuchService: "NoSuchService"
                case .failedToLaunch: "FailedToLaunch"
                default: "NotRunning"
                }
                return .failure(.named(suffix, "\(error)"))
            }
        case "EnterBackground", "EnterForeground":
            do {
                if call.member == "EnterBackground" {
                    try await host.enterBackground()
                } else {
                    try await host.enterForeground()
                }
                return .success(host.status.state.rawValue)
            } catch {
                return .failure(.named("IllegalTransition", "\(error)"))
            }
        default:
            return .failure(HostDBusCall.Failure(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(call.member)"))
        }
    }
}

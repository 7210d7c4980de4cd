import AppHost
import AppHostSupport
import Logging
import ServiceLifecycle

/// apphostd's edge, composed for a host of yours: systemd's notifications and watchdog, the
/// lifecycle signals, memory pressure, significant time changes, the daemon on its bus name,
/// logind's sleep and shutdown, the network path and the power state, the restorable state's and the metrics' files, on one event loop, as the services of one
/// `ServiceGroup` in the order they need. It builds services; it is not one.
///
/// Make it first thing in `main`: it blocks the lifecycle signals before other threads start,
/// and starts the edge's loop, on which the desktop notifications' client can run too. Then
/// build the host and run `services(for:options:with:)` in a group; `close()` after the group
/// ran. This is the shape the edge's next sources plug into: each is a part of ``Options`` and
/// a place in ``services(for:options:with:)``'s order.
public struct SystemdIntegration: Sendable {
    /// The edge's one event loop.
    let loop: EdgeEventLoop
    let logger: Logger

    /// Blocks the lifecycle signals in this thread (the threads it starts inherit the mask) and
    /// starts the edge's loop. `logger`: where the edge's lines go.
    /// - Throws: `LifecycleSignalError` when the signals cannot be blocked; an error that says
    ///   why when the loop's thread or its sd-event loop cannot be had.
    public init(logger: Logger) throws {
        try LifecycleSignalMask.blockInCurrentThread()
        self.loop = try EdgeEventLoop(name: "apphost-edge")
        self.logger = logger
    }

    /// A client of freedesktop's notifications on the edge's loop, for
    /// `BuiltinServices.registry(desktopNotifications:)`.
    public func desktopNotifications(bus: DBusAddress = .user) -> DesktopNotificationClient {
        DesktopNotificationClient(bus: bus, on: loop)
    }

    /// The group's services for `host`, the parts `options` chooses, in the order the edge
    /// needs, `others` last. The group
    /// stops its services in reverse order, so:
    /// - the reporter is first: the host's last reports (`STOPPING=1`, the final `STATUS=`) go
    ///   out after everything else stopped;
    /// - the metrics' and the restorable state's writers come before the host: they write its
    ///   last figures and state after it ended;
    /// - the host's end (a terminate, a failed launch) shuts the group down;
    /// - the bus server, logind's client and the machine's conditions start after the launch (`AfterLaunch`), off the way
    ///   to `READY=1`, and end on their own without ending the group when the machine lacks
    ///   them;
    /// - `others` (your HTTP server, say) stop first.
    /// - Throws: `LifecycleSignalError` when the signals cannot be read.
    public func services(
        for host: PluggableApplicationHost, options: Options, with others: [ServiceGroupConfiguration.ServiceConfiguration] = []
    ) throws(LifecycleSignalError) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        try parts(for: host, options: options, with: others).services
    }

    /// The services, and the memory-pressure and time-change edges among them (the daemon's
    /// start line says what they watch).
    package func parts(
        for host: PluggableApplicationHost, options: Options, with others: [ServiceGroupConfiguration.ServiceConfiguration] = []
    ) throws(LifecycleSignalError) -> (services: [ServiceGroupConfiguration.ServiceConfiguration], memoryPressure: MemoryPressureEdge?, timeChanges: TimeChangeEdge?) {
        let signals = try LifecycleSignalEdge(host: host, logger: logger, on: loop, reload: options.reload)
        // Names given, because the group would otherwise describe each service by reflection on
        // every start (about 1.7 ms of readiness).
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(
                service: SystemdNotifyEdge(host: host, notifier: options.notifier, reloadStatus: options.reloadStatus, triggersWatchdog: options.watchdog != nil),
                serviceName: "reporter"
            ),
        ]
        if let metrics = options.metrics { services.append(.init(service: metrics, serviceName: "metrics")) }
        if let restorable = options.restorableState { services.append(.init(service: restorable.writer, serviceName: "restorable-state")) }
        services += [
            .init(service: host, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: "host"),
            .init(service: signals, serviceName: "signals"),
            .init(service: WatchdogEdge(host: host, settings: options.watchdog, notifier: options.notifier), serviceName: "watchdog"),
        ]
        let pressure = options.memoryPressure.map { MemoryPressureEdge(host: host, environment: options.environment, thresholds: $0, logger: logger, on: loop) }
        if let pressure { services.append(.init(service: pressure, serviceName: "memory-pressure")) }
        if let busName = options.busName {
            // systemctl service-log-level / service-log-target, and status / restart (Host1).
            let reload = options.busReload.map { reload in { @Sendable in await reload(host) } }
            let server = HostDBusEdge(busName: busName, identifier: options.name, host: host, logger: logger, on: loop, reload: reload)
            services.append(.init(service: AfterLaunch(host: host, server), successTerminationBehavior: .ignore, serviceName: "log-control"))
        }
        if options.followsLogind {
            let logind = LogindEdge(host: host, who: options.name, logger: logger, on: loop, session: options.logindSession)
            services.append(.init(service: AfterLaunch(host: host, logind), successTerminationBehavior: .ignore, serviceName: "logind"))
        }
        // The day and the zone are looked at from the launch on: a change before it is no
        // change to services that were not running.
        let time = options.followsTimeChanges ? TimeChangeEdge(host: host, logger: logger, on: loop, environment: options.environment) : nil
        if let time { services.append(.init(service: AfterLaunch(host: host, time), successTerminationBehavior: .ignore, serviceName: "time-changes")) }
        if let source = options.networkPathSource {
            let network = NetworkPathEdge(host: host, source: source, logger: logger, on: loop)
            services.append(.init(service: AfterLaunch(host: host, network), successTerminationBehavior: .ignore, serviceName: "network"))
        }
        if options.followsPowerState {
            let power = PowerStateEdge(host: host, logger: logger, on: loop)
            services.append(.init(service: AfterLaunch(host: host, power), successTerminationBehavior: .ignore, serviceName: "power"))
        }
        return (services + others, pressure, time)
    }

    /// Ends the edge's loop and its thread. After the group ran.
    public func close() {
        loop.close()
    }
}

import AppHost
import AppHostServices
import AppHostSupport
import AppHostSystemd
import CApphostdPrelude
import CoreMetrics
import Glibc
import Logging
import ServiceLifecycle
import Synchronization

/// The daemon: loads the config, then runs the host in one `ServiceGroup` beside the edge
/// services — the sd_notify reporter, lifecycle signals, memory pressure, the watchdog — and maps
/// how the launch went to an exit status.
struct Daemon: Sendable {
    let configPath: String
    let registry: ServiceRegistry
    var identity: DaemonIdentity = .apphostd
    var environment: [String: String] = ProcessEnvironment.current

    /// Runs until terminated; returns the exit status.
    func run() async -> ExitStatus {
        let notifier = SystemdNotifier()
        // A config the daemon cannot run: every problem on stderr, the first in `STATUS=`.
        func refuse(_ errors: InvalidConfiguration) -> ExitStatus {
            for line in errors.lines(commandName: identity.commandName) { StandardError.writeError(line) }
            notifier.status("bad configuration: \(errors.summary)")
            return .badConfiguration
        }
        let loader = ConfigurationLoader(registry: registry, environment: environment, stateDirectoryName: identity.stateDirectoryName)
        let configuration: DaemonConfiguration
        do {
            configuration = try loader.load(path: configPath)
        } catch {
            return refuse(error)
        }

        JournalLogHandler.bootstrap(identifier: identity.commandName, level: configuration.logLevel, metadataProvider: .hostRequestID)
        LogLevelControl.shared.applyConfigured(configuration.logLevel)
        let logger = Logger(label: identity.commandName)

        if apphostd_prelude_block_result() != 0 {
            logger.critical("the lifecycle signals could not be blocked before start; signals would be lost")
            return .launchFailed
        }

        // One owner per state directory, for the daemon's whole life.
        let stateLock: StateDirectoryLock
        do {
            stateLock = try StateDirectoryLock(directory: configuration.stateDirectory)
        } catch {
            StandardError.writeError("\(identity.commandName): \(error)")
            notifier.status("\(error)")
            if case .held = error { return .stateDirectoryInUse }
            return .launchFailed
        }
        defer { withExtendedLifetime(stateLock) {} }
        // Writes a kill cut short left their temporary files; the lock says no writer of ours runs.
        let leftovers = AtomicFile.removeLeftovers(inDirectory: configuration.stateDirectory)
        if !leftovers.isEmpty {
            logger.info("removed \(leftovers.count.counted("temporary file")) of writes a kill cut short: \(leftovers.sorted().joined(separator: ", "))")
        }

        // What the previous run kept: the fd systemd gave back from its store (taken by the
        // prelude before any thread) and the state directory's copy.
        let restorable = RestorableStateFiles(
            directory: configuration.stateDirectory,
            received: ReceivedFileDescriptors(
                listenFDCount: Int(apphostd_prelude_listen_fds()),
                names: apphostd_prelude_listen_fd_names().map { String(cString: $0) }
            ),
            fileDescriptorStore: FileDescriptorStore(environment: environment),
            logger: logger
        )
        var hostConfiguration = configuration.hostConfiguration
        hostConfiguration.restorableState = restorable
        // The figures, for node_exporter's textfile collector: the host's, the built-in
        // services', and a user's own services' through swift-metrics' global factory.
        let metrics = configuration.metrics.textfile.map {
            MetricsTextfileEdge(path: $0, daemon: configuration.metrics.daemonLabel, logger: logger)
        }
        if let metrics {
            Self.bootstrapMetricsOnce(metrics.factory)
            hostConfiguration.metricsFactory = metrics.factory
            CoreMetrics.Gauge(label: "apphost_info", dimensions: [("version", identity.version)], factory: metrics.factory).record(1)
        }

        // The edge: the lifecycle signals, memory pressure, the bus and logind on one loop.
        let systemd: SystemdIntegration
        do {
            systemd = try SystemdIntegration(logger: logger)
        } catch {
            logger.critical("\(error)")
            notifier.status("\(error)")
            return .launchFailed
        }
        defer { systemd.close() }
        // The notification service's desktop sink, on the edge's loop: the user's session bus.
        let registry = BuiltinServices.providingDesktopNotifications(systemd.desktopNotifications(), in: self.registry)
        let host: PluggableApplicationHost
        do {
            host = try PluggableApplicationHost(
                services: configuration.serviceDescriptors(registry: registry),
                configuration: hostConfiguration,
                logger: logger
            )
        } catch {
            return refuse(error)
        }

        let watchdog: WatchdogSettings?
        do {
            watchdog = try WatchdogSettings.fromEnvironment()
        } catch {
            logger.warning("watchdog off: $WATCHDOG_USEC=\(environment["WATCHDOG_USEC"] ?? "") $WATCHDOG_PID=\(environment["WATCHDOG_PID"] ?? "") are not what systemd sets (\(error)); no pings are sent")
            watchdog = nil
        }
        let reloader = Reloader(configPath: configPath, loader: loader, registry: registry, logger: logger, recorder: ReloadRecorder(stateDirectory: configuration.stateDirectory), metrics: configuration.metrics)
        var options = SystemdIntegration.Options(name: identity.commandName)
        (options.notifier, options.reloadStatus, options.watchdog, options.environment) = (notifier, "reloading \(configPath)", watchdog, environment)
        options.reload = { await reloader.reload(host: $0) }
        options.busReload = { await reloader.reload(host: $0, recording: false) }
        options.memoryPressure = configuration.memoryPressure.enabled ? configuration.memoryPressure.thresholds : nil
        (options.restorableState, options.metrics) = (restorable, metrics)
        (options.followsLogind, options.logindSession) = (configuration.followsLogind, configuration.logindSession)
        options.followsTimeChanges = configuration.followsTimeChanges
        (options.networkPathSource, options.followsPowerState) = (configuration.networkPathSource, configuration.followsPowerState)
        let parts: (services: [ServiceGroupConfiguration.ServiceConfiguration], memoryPressure: MemoryPressureEdge?, timeChanges: TimeChangeEdge?)
        do {
            parts = try systemd.parts(for: host, options: options)
        } catch {
            logger.critical("cannot read signals: \(error)")
            notifier.status("cannot read signals: \(error)")
            return .launchFailed
        }
        if let watchdog, watchdog.isBelowFloor {
            logger.warning("watchdog: \(watchdog.summary)")
        }

        var starting: Logger.Metadata = [
            "config": "\(configPath)",
            "services": "\(configuration.services.map(\.name).joined(separator: ","))",
            "state_directory": "\(configuration.stateDirectory)",
            "memory_pressure": "\(parts.memoryPressure?.source.sourceDescription ?? "off (disabled in config)")",
            "watchdog": "\(watchdog?.summary ?? "off")",
            "restorable_state": "\(restorable.fileDescriptorStore.summary); \(restorable.path)",
            "time_changes": "\(parts.timeChanges?.summary ?? "off (host.time-changes: false)")",
            "network": "\(configuration.networkPathSource.map { "\($0.rawValue) (\($0.sources), on the system bus)" } ?? "off (host.network: false)")",
            "power": "\(configuration.followsPowerState ? "\(PowerStateSource.sources), on the system bus" : "off (host.power: false)")",
            "metrics": "\(metrics.map { "\($0.path) (daemon=\"\($0.factory.daemon)\")" } ?? "off (no host.metrics.textfile)")",
        ]
        // Whether logind is followed is logind's edge's one line to say, once it knows (after
        // READY=1); only "off" is known here.
        if !configuration.followsLogind { starting["logind"] = "off (host.logind: false)" }
        logger.info("\(identity.commandName) \(identity.version) starting", metadata: starting)

        var groupLogger = logger
        groupLogger.logLevel = .warning
        // The edge's order (SystemdIntegration.services): the host's end shuts the others down, in
        // reverse order. Signals are the signal edge's, not the group's.
        let group = ServiceGroup(configuration: .init(services: parts.services, gracefulShutdownSignals: [], cancellationSignals: [], logger: groupLogger))
        let grace = configuration.terminateDeadline + .seconds(1)
        let groupFailure = await withTaskGroup(of: String?.self) { tasks in
            tasks.addTask {
                do {
                    try await group.run()
                } catch is LaunchFailure {
                    // Reported below, from the host's own record of the launch.
                } catch {
                    return "\(error)"
                }
                return nil
            }
            tasks.addTask {
                // Every service got its last call; the group ends once hooks still running
                // return. One that never does (a thread blocked for good) must not keep the
                // process alive: the exit ends it.
                await host.terminated()
                do { try await Task.sleep(for: grace) } catch { return nil }
                let status = await exitStatus(of: host, logger: logger)
                logger.error("a service is still inside a hook \(grace.configText) after terminate; exiting without it")
                Glibc.exit(status.rawValue)
            }
            let failure = await tasks.next() ?? nil
            tasks.cancelAll()
            return failure
        }
        let status = await exitStatus(of: host, logger: logger)
        return Self.exitStatus(status, groupFailure: groupFailure, logger: logger)
    }

    /// A group that failed (one of the daemon's own services ended or threw) is a failure of the
    /// daemon, whatever the host's terminate said: exit 70, with the reason in the journal.
    static func exitStatus(_ status: ExitStatus, groupFailure: String?, logger: Logger) -> ExitStatus {
        guard let groupFailure, status == .clean else { return status }
        logger.error("exiting with status \(ExitStatus.software.rawValue): the daemon's service group failed: \(groupFailure)")
        return .software
    }

    /// swift-metrics takes one factory per process; a second daemon run in the same process
    /// (tests) records through the host's own factory only.
    static func bootstrapMetricsOnce(_ factory: TextfileMetricsFactory) {
        if !metricsBootstrapped.exchange(true, ordering: .acquiringAndReleasing) {
            MetricsSystem.bootstrap(factory)
        }
    }

    private static let metricsBootstrapped = Atomic<Bool>(false)

    /// 0 after a clean terminate (also one during launch), 1 after a failed launch.
    func exitStatus(of host: PluggableApplicationHost, logger: Logger) async -> ExitStatus {
        do {
            try await host.launched()
            logger.info("terminated cleanly")
            return .clean
        } catch where error.reason == .terminated {
            // SIGTERM during launch (systemctl stop while starting): a requested stop.
            logger.notice("\(error); the services that had launched were terminated")
            return .clean
        } catch {
            logger.error("launch failed: \(error)", metadata: ["service": "\(error.service)", "hook": "\(error.hook)"])
            return .launchFailed
        }
    }
}

import AppHost
import AppHostServices
import AppHostSupport
import AppHostSystemd
import CApphostdPrelude
import CoreMetrics
import Logging
import ServiceLifecycle

extension Daemon {
    /// A start that got as far as the group: what `run()` needs from it, and what must live as
    /// long as the daemon.
    struct Started {
        let logger: Logger
        /// The state directory's owner, held until the daemon ends.
        let stateLock: StateDirectoryLock
        /// The edge's loop, closed once the group ran.
        let systemd: SystemdIntegration
        let host: PluggableApplicationHost
        /// The group's services, in the edge's order.
        let services: [ServiceGroupConfiguration.ServiceConfiguration]
        let terminateDeadline: Duration
    }

    /// How a start ended: ready to run the group, or with the exit status it failed with.
    enum Start {
        case running(Started)
        case exited(ExitStatus)
    }

    /// Everything before the group runs: the config, the log, the state directory, the host and
    /// the edge. Synchronous and never inlined into `run()`, so its locals stay on the thread's
    /// stack: inlined, they were part of `run()`'s async frame, 8.5 KiB kept for the daemon's
    /// whole life (Benchmarks/README.md, issue 54's fourth slice).
    @inline(never)
    func start() -> Start {
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
            return .exited(refuse(error))
        }

        JournalLogHandler.bootstrap(identifier: identity.commandName, level: configuration.logLevel, metadataProvider: .hostRequestID)
        LogLevelControl.shared.applyConfigured(configuration.logLevel)
        let logger = Logger(label: identity.commandName)

        if apphostd_prelude_block_result() != 0 {
            logger.critical("the lifecycle signals could not be blocked before start; signals would be lost")
            return .exited(.launchFailed)
        }

        // One owner per state directory, for the daemon's whole life.
        let stateLock: StateDirectoryLock
        do {
            stateLock = try StateDirectoryLock(directory: configuration.stateDirectory)
        } catch {
            StandardError.writeError("\(identity.commandName): \(error)")
            notifier.status("\(error)")
            if case .held = error { return .exited(.stateDirectoryInUse) }
            return .exited(.launchFailed)
        }
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
            return .exited(.launchFailed)
        }
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
            let status = refuse(error)
            systemd.close()
            return .exited(status)
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
            systemd.close()
            return .exited(.launchFailed)
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
        return .running(Started(
            logger: logger, stateLock: stateLock, systemd: systemd, host: host, services: parts.services,
            terminateDeadline: configuration.terminateDeadline
        ))
    }
}

import AppHost
import AppHostSupport
import AppHostSystemd
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
        let started: Started
        switch start() {
        case .running(let running): started = running
        case .exited(let status): return status
        }
        defer {
            started.systemd.close()
            withExtendedLifetime(started.stateLock) {}
        }
        let (host, logger) = (started.host, started.logger)
        var groupLogger = logger
        groupLogger.logLevel = .warning
        // The edge's order (SystemdIntegration.services): the host's end shuts the others down, in
        // reverse order. Signals are the signal edge's, not the group's.
        let group = ServiceGroup(configuration: .init(services: started.services, gracefulShutdownSignals: [], cancellationSignals: [], logger: groupLogger))
        let grace = started.terminateDeadline + .seconds(1)
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

import AppHost
import AppHostSystemd
import ArgumentParser
import CApphostdPrelude
import Foundation
import Logging

/// The daemon: loads the config, wires the host to systemd (notify, watchdog), signals and
/// memory pressure, and turns each input into one host request on the host's serial path.
struct Daemon: Sendable {
    let configPath: String
    let registry: ServiceRegistry
    var environment: [String: String] = ProcessInfo.processInfo.environment

    /// Runs until terminated; returns the exit status.
    func run() async -> ExitCode {
        let notifier = SystemdNotifier(environment: environment)
        let loader = ConfigurationLoader(registry: registry, environment: environment)
        let configuration: DaemonConfiguration
        do {
            configuration = try loader.load(path: configPath)
        } catch {
            FileHandle.standardError.write(Data("<3>apphostd: \(error)\n".utf8))
            notifier.status("bad configuration: \(error)")
            return ExitStatus.badConfiguration
        }

        JournalLogHandler.bootstrap(identifier: "apphostd", level: configuration.logLevel)
        LogLevelControl.shared.level = configuration.logLevel
        let logger = Logger(label: "apphostd")

        if apphostd_prelude_block_result() != 0 {
            logger.critical("the lifecycle signals could not be blocked before start; signals would be lost")
            return ExitStatus.launchFailed
        }
        let signals: SignalSource
        do {
            signals = try SignalSource()
            // The exec service's swift-subprocess monitor thread waits with every signal unblocked.
            try signals.forwardSignalsDeliveredToOtherThreads()
        } catch {
            logger.critical("cannot read signals: \(error)")
            notifier.status("cannot read signals: \(error)")
            return ExitStatus.launchFailed
        }
        let pressure = configuration.memoryPressure.enabled
            ? MemoryPressureSource(environment: environment, thresholds: configuration.memoryPressure.thresholds, logger: logger)
            : nil
        let watchdog = WatchdogSettings.fromEnvironment(environment)

        let host: PluggableApplicationHost
        do {
            host = try PluggableApplicationHost(
                services: configuration.serviceDescriptors(registry: registry),
                configuration: .init(
                    hookDeadline: configuration.hookDeadline,
                    launchDeadline: configuration.launchDeadline,
                    terminateDeadline: configuration.terminateDeadline,
                    stateDirectory: configuration.stateDirectory,
                    trimHeap: { _ in HeapTrimmer.trim() }
                ),
                logger: logger
            )
        } catch {
            FileHandle.standardError.write(Data("<3>apphostd: \(error)\n".utf8))
            notifier.status("bad configuration: \(error)")
            return ExitStatus.badConfiguration
        }
        let reports = host.reports

        logger.info(
            "apphostd \(ApphostdCommand.version) starting",
            metadata: [
                "config": "\(configPath)",
                "services": "\(configuration.services.map(\.name).joined(separator: ","))",
                "state_directory": "\(configuration.stateDirectory)",
                "memory_pressure": "\(pressure?.sourceDescription ?? "off (disabled in config)")",
                "watchdog": "\(watchdog.map { "ping every \($0.pingInterval)" } ?? "off")",
            ]
        )

        let reloader = Reloader(configPath: configPath, loader: loader, registry: registry, logger: logger)
        let configPath = self.configPath
        let status: ExitCode = await withTaskGroup(of: ExitCode?.self) { group in
            group.addTask {
                async let reporting: Void = Self.forward(reports, to: notifier, configPath: configPath)
                let exit: ExitCode
                do {
                    try await host.run()
                    logger.info("terminated cleanly")
                    exit = ExitStatus.clean
                } catch let failure as LaunchFailure where failure.reason == .terminated {
                    // SIGTERM during launch (systemctl stop while starting): a requested stop.
                    logger.notice("\(failure); the services that had launched were terminated")
                    exit = ExitStatus.clean
                } catch let failure as LaunchFailure {
                    logger.error("launch failed: \(failure)", metadata: ["service": "\(failure.service)", "hook": "\(failure.hook)"])
                    exit = ExitStatus.launchFailed
                } catch {
                    logger.error("host failed: \(error)")
                    exit = ExitStatus.launchFailed
                }
                await reporting
                return exit
            }
            group.addTask {
                await withDiscardingTaskGroup { requests in
                    for await signal in signals.signals {
                        // Immediate: the request is queued before the next signal is read, so
                        // requests keep signal order, and none waits for the one before it.
                        requests.addImmediateTask {
                            await Self.handle(signal, host: host, reloader: reloader, logger: logger)
                        }
                    }
                }
                return nil
            }
            if let pressure {
                group.addTask {
                    for await level in pressure.events {
                        logger.notice("memory pressure", metadata: ["level": "\(level.rawValue)", "source": "\(pressure.sourceDescription)"])
                        try? await host.receiveMemoryWarning(level: level)
                    }
                    return nil
                }
            }
            if let watchdog {
                group.addTask {
                    // The only timer of an idle daemon, and only when systemd asked for it. The
                    // ping goes through the host's loop, so a stuck host stops pinging.
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: watchdog.pingInterval) } catch { break }
                        await host.onLoop { notifier.watchdogPing() }
                    }
                    return nil
                }
            }
            var exit = ExitStatus.clean
            for await result in group {
                if let result {
                    exit = result
                    break
                }
            }
            signals.close()
            pressure?.close()
            group.cancelAll()
            return exit
        }
        return status
    }

    /// Tells systemd what the host reports, until the host's run ends.
    static func forward(_ reports: AsyncStream<HostReport>, to notifier: SystemdNotifier, configPath: String) async {
        for await report in reports {
            switch report {
            case .status(let status), .stopped(let status): notifier.status(status.description)
            case .progress(let next): notifier.extendTimeout(by: next + .seconds(1))
            case .ready(let status): notifier.ready(status: status.description)
            case .reloading: notifier.reloading(status: "reloading \(configPath)")
            case .stopping(let reason): notifier.stopping(status: "stopping (\(reason))")
            case .launchFailed(let failure, _): notifier.launchFailed(status: "launch failed: \(failure)", errno: failure.errnoValue)
            }
        }
    }

    static func handle(_ signal: LifecycleSignal, host: PluggableApplicationHost, reloader: Reloader, logger: Logger) async {
        logger.debug("signal \(signal.name)")
        do {
            switch signal {
            case .terminate:
                await host.terminate(reason: signal.name)
            case .toggleBackground:
                try await host.toggleBackground()
            case .enterBackground:
                try await host.enterBackground()
            case .enterForeground:
                try await host.enterForeground()
            case .trimMemory:
                try await host.receiveMemoryWarning(level: .critical)
            case .reload:
                await reloader.reload(host: host)
            }
        } catch {
            logger.notice("\(signal.name) ignored: \(error)")
        }
    }
}

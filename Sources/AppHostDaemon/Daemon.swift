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
                observer: .init(
                    statusDidChange: { notifier.status($0.description) },
                    didProgress: { _, _, next in notifier.extendTimeout(by: next + .seconds(1)) },
                    didLaunch: { _, status in notifier.ready(status: status.description) }
                ),
                logger: logger
            )
        } catch {
            FileHandle.standardError.write(Data("<3>apphostd: \(error)\n".utf8))
            notifier.status("bad configuration: \(error)")
            return ExitStatus.badConfiguration
        }

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

        let reloader = Reloader(configPath: configPath, loader: loader, registry: registry, notifier: notifier, logger: logger)
        let status: ExitCode = await withTaskGroup(of: ExitCode?.self) { group in
            group.addTask {
                do {
                    try await host.run()
                    logger.info("terminated cleanly")
                    return ExitStatus.clean
                } catch let failure as LaunchFailure where failure.reason == .terminated {
                    // SIGTERM during launch (systemctl stop while starting): a requested stop.
                    logger.notice("\(failure); the services that had launched were terminated")
                    return ExitStatus.clean
                } catch let failure as LaunchFailure {
                    logger.error("launch failed: \(failure)", metadata: ["service": "\(failure.service)", "hook": "\(failure.hook)"])
                    notifier.launchFailed(status: "launch failed: \(failure)", errno: failure.errnoValue)
                    return ExitStatus.launchFailed
                } catch {
                    logger.error("host failed: \(error)")
                    return ExitStatus.launchFailed
                }
            }
            group.addTask {
                for await signal in signals.signals {
                    await Self.handle(signal, host: host, notifier: notifier, reloader: reloader, logger: logger)
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
                    // ping goes through the host's serial path, so a stuck host stops pinging.
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: watchdog.pingInterval) } catch { break }
                        await host.onSerialPath { notifier.watchdogPing() }
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

    static func handle(_ signal: LifecycleSignal, host: PluggableApplicationHost, notifier: SystemdNotifier, reloader: Reloader, logger: Logger) async {
        logger.debug("signal \(signal.name)")
        do {
            switch signal {
            case .terminate:
                notifier.stopping(status: "stopping (\(signal.name))")
                await host.terminate()
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

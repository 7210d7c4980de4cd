import AppHost
import Logging
import ServiceLifecycle

/// The lifecycle signals as host requests, as a `Service` for the `ServiceGroup` that runs the
/// host: SIGTERM and SIGINT terminate, SIGUSR1 toggles background and foreground, SIGRTMIN+1 and
/// SIGRTMIN+2 go to the background and the foreground, SIGRTMIN+18 is a critical memory warning,
/// SIGHUP calls `reload`.
///
/// It reads them from a `signalfd` (queued real-time signals all arrive, in order) and queues one
/// request per signal in signal order, without waiting for the one before: a SIGTERM never waits
/// behind a SIGUSR1. Give the `ServiceGroup` no signals of its own for these.
public struct LifecycleSignalEdge: Service {
    let host: PluggableApplicationHost
    let source: SignalSource
    let reload: @Sendable (PluggableApplicationHost) async -> Void
    let logger: Logger

    /// Blocks the lifecycle signals in the calling thread (and every thread it starts later),
    /// opens the signalfd and makes signals that land on other threads reach it. Create it early
    /// in `main`, before other threads exist.
    ///
    /// - Parameters:
    ///   - host: the host the signals become requests of.
    ///   - logger: where a signal's line goes (the journal, in the daemon).
    ///   - reload: what SIGHUP does; by default it logs that reload is not configured.
    /// - Throws: `LifecycleSignalError` when the signals cannot be blocked or read.
    public init(
        host: PluggableApplicationHost,
        logger: Logger = Logger(label: "apphost.signals"),
        reload: (@Sendable (PluggableApplicationHost) async -> Void)? = nil
    ) throws(LifecycleSignalError) {
        try self.init(host: host, logger: logger, on: nil, reload: reload)
    }

    /// Like `init(host:logger:reload:)`, reading the signals on `loop`'s thread (which the
    /// daemon shares with memory pressure), or on a thread of the source's own without one.
    package init(
        host: PluggableApplicationHost,
        logger: Logger,
        on loop: EdgeEventLoop?,
        reload: (@Sendable (PluggableApplicationHost) async -> Void)? = nil
    ) throws(LifecycleSignalError) {
        try LifecycleSignalMask.blockInCurrentThread()
        source = try SignalSource(on: loop)
        // A library thread that waits with every signal unblocked (swift-subprocess's monitor,
        // libdispatch's main queue) would otherwise take a default action: death.
        try source.forwardSignalsDeliveredToOtherThreads()
        self.host = host
        self.logger = logger
        self.reload = reload ?? { _ in logger.notice("SIGHUP ignored: this program has no reload") }
    }

    /// Turns signals into host requests until the group shuts down.
    public func run() async {
        defer { source.close() }
        // A graceful shutdown closes the source, which ends the stream. (Merging the stream with
        // the shutdown sequence, as `cancelOnGracefulShutdown()` does, relays every signal
        // through one more task on its way to the host.)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { requests in
                for await signal in source.signals {
                    // Immediate: the request is queued before the next signal is read, so
                    // requests keep signal order, and none waits for the one before it.
                    requests.addImmediateTask { await handle(signal) }
                }
            }
        } onGracefulShutdown: {
            source.close()
        }
    }

    func handle(_ signal: LifecycleSignal) async {
        logger.debug("signal \(signal.name)")
        let began = ContinuousClock.now
        // What a request by signal costs, beside logind's (`ready for sleep after …`).
        defer {
            let took = ContinuousClock.now - began
            logger.debug("\(signal.name) carried out in \(took.configText)", metadata: ["signal": "\(signal.name)", "duration_us": "\(took.microseconds)"])
        }
        do {
            switch signal {
            case .terminate: await host.terminate(reason: signal.name)
            case .toggleBackground: try await host.toggleBackground()
            case .enterBackground: try await host.enterBackground()
            case .enterForeground: try await host.enterForeground()
            case .trimMemory: try await host.receiveMemoryWarning(level: .critical)
            case .reload: await reload(host)
            }
        } catch {
            logger.notice("\(signal.name) ignored: \(error)")
        }
    }
}

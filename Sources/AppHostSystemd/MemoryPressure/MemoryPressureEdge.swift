import AppHost
import Logging
import ServiceLifecycle

/// Memory pressure as memory warnings to the host, as a `Service`: systemd's protocol
/// (`$MEMORY_PRESSURE_WATCH`) or PSI, without a timer (see `MemoryPressureSource`).
public struct MemoryPressureEdge: Service {
    let host: PluggableApplicationHost
    /// The watched source.
    public let source: MemoryPressureSource
    let logger: Logger

    /// Watches what `environment` and `thresholds` choose.
    public init(
        host: PluggableApplicationHost,
        environment: [String: String],
        thresholds: MemoryPressureSource.Thresholds = .default,
        logger: Logger = Logger(label: "apphost.memory-pressure")
    ) {
        self.init(host: host, environment: environment, thresholds: thresholds, logger: logger, on: nil)
    }

    /// Like `init(host:environment:thresholds:logger:)`, watching on `loop`'s thread (which the
    /// daemon shares with the signals), or on a thread of the source's own without one.
    package init(
        host: PluggableApplicationHost,
        environment: [String: String],
        thresholds: MemoryPressureSource.Thresholds = .default,
        logger: Logger,
        on loop: EdgeEventLoop?
    ) {
        self.host = host
        self.source = MemoryPressureSource(environment: environment, thresholds: thresholds, logger: logger, on: loop)
        self.logger = logger
    }

    /// Delivers each pressure event as a memory warning until the group shuts down. A source
    /// with nothing (left) to watch said why; the edge then waits idle for the shutdown, so a
    /// missing pressure source costs the warnings, never the daemon.
    public func run() async {
        defer { source.close() }
        // The shutdown finishes the stream: `cancelOnGracefulShutdown()` would merge it with the
        // shutdown's, three more tasks and a dozen generic types on the way to READY=1.
        await withGracefulShutdownHandler {
            for await level in source.events {
                logger.notice("memory pressure", metadata: ["level": "\(level.rawValue)", "source": "\(source.sourceDescription)"])
                try? await host.receiveMemoryWarning(level: level)
            }
        } onGracefulShutdown: { [source] in
            source.close()
        }
        guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
        logger.debug("memory pressure: nothing to watch; idle until the shutdown")
        try? await gracefulShutdown()
    }
}

import AppHost
import CoreMetrics

/// Logs each launch, says when it flushes before the background, and publishes a `Beat` on
/// the bus every `interval` while it runs, counting on across runs.
public struct Heartbeat: Sendable {
    /// Published on the bus once per `interval`, counting from 1 on the first run.
    public struct Beat: Sendable, Hashable {
        public let count: Int
    }

    /// Time between two heartbeats.
    public let interval: Duration

    /// Reads `interval` (default 30s) from the service's `settings:`.
    public init(configuration: ServiceSection) throws(ConfigurationError) {
        try configuration.requireOnlyKeys(["interval"])
        interval = try configuration.duration("interval") ?? .seconds(30)
    }
}

// The hooks go in the extension that declares the conformance: there the compiler warns
// about a hook whose name is nearly right.
extension Heartbeat: ApplicationService {
    public func application(_ app: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        app.logger.info("launch #\(options.launchCount), previous exit: \(options.previousExit)")
        if case .coreDump(let signal)? = options.previousExitCause {
            app.logger.warning("the last run crashed on SIG\(signal)")
        }
        return true
    }

    public func applicationDidEnterBackground(_ app: ApplicationHandle) async throws {
        app.logger.info("flushing before background")
    }

    public func run(_ app: ApplicationHandle) async throws {
        // The count is restorable state: it goes on where the last run left off, even after
        // a crash, a SIGKILL or a restart.
        var count = app.launchOptions?.restoredState.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        // Recorded where the host records its own figures: under apphostd with
        // host.metrics.textfile, heartbeat_beats_total{daemon="…"} in the Prometheus textfile.
        let beats = Counter(label: "heartbeat_beats_total", factory: app.metricsFactory)
        while true {
            let started = ContinuousClock.now
            try await Task.sleep(for: interval)
            // A beat later than a whole interval: this process starves for CPU, so say so.
            if ContinuousClock.now - started > interval * 2 {
                app.reportUnhealthy("a beat came more than an interval late")
            } else {
                app.reportHealthy()
            }
            count += 1
            beats.increment()
            app.bus.publish(Beat(count: count))
            app.setSharedState(LastBeat.self, to: count)
            app.keepRestorableState(Array(String(count).utf8))
        }
    }
}

/// The last beat's count, shared with every service of the host (`app.sharedState(LastBeat.self)`).
public enum LastBeat: SharedStateKey {
    public static let defaultValue = 0
}

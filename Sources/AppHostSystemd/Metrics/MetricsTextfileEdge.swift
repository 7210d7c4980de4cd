import AppHostSupport
import Logging
import ServiceLifecycle
import Synchronization

/// Writes the metrics registry into a file for node_exporter's textfile collector, as a
/// `Service`: rendered into a temporary file beside it (its name does not end in `.prom`, so
/// the collector never reads half a file), then renamed over it, mode 0644, without timestamps.
///
/// It writes when a figure changed (`TextfileMetricsFactory` tells it), at most once per
/// `minimumInterval`: the first change after a quiet spell is written at once, later ones wait
/// for a one-shot deadline, so the launch's `launching` is written at once and its `active`
/// within a second. An idle daemon has no timer here. On graceful shutdown or cancellation it
/// writes the last figures (the host's `notRunning`) before `run()` returns. List it before the host in the `ServiceGroup`,
/// which shuts services down in reverse order.
///
/// A file it cannot write (a missing directory, a full disk, no permission) is a logged
/// warning, once per distinct reason, and the next change tries again: the daemon runs on.
public struct MetricsTextfileEdge: Service {
    /// The file node_exporter reads (`*.prom`).
    public let path: String
    /// The swift-metrics backend whose registry this writes; every record through it marks
    /// the file for writing.
    public let factory: TextfileMetricsFactory
    let logger: Logger
    let minimumInterval: Duration
    private let shared: Shared

    /// A writer of a new registry into `path`, its series labelled `daemon="<daemon>"`.
    public init(path: String, daemon: String, logger: Logger, minimumInterval: Duration = .seconds(1)) {
        let shared = Shared()
        self.path = path
        self.logger = logger
        self.minimumInterval = minimumInterval
        self.shared = shared
        self.factory = TextfileMetricsFactory(daemon: daemon, logger: logger) { shared.markChanged() }
    }

    /// Writes whenever figures change, until graceful shutdown or cancellation; then writes the
    /// last figures and returns.
    public func run() async {
        var lastWrite: ContinuousClock.Instant?
        await withTaskCancellationOrGracefulShutdownHandler {
            for await _ in shared.wakeups {
                if let lastWrite {
                    // Cut short by a shutdown: the last figures are written at once below.
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(until: lastWrite + minimumInterval) }
                }
                guard shared.isDirty.load(ordering: .acquiring) else { continue }
                writeLogging()
                lastWrite = .now
            }
        } onCancelOrGracefulShutdown: { [shared] in
            shared.wake.finish()
        }
        writeLogging()
    }

    /// Renders and writes the file now, on the caller's path.
    /// - Throws: `AtomicFile.Failure` naming the path and the system's reason.
    package func write() throws(AtomicFile.Failure) {
        shared.isDirty.store(false, ordering: .releasing)
        try AtomicFile.write(factory.render(), to: path, permissions: 0o644, durable: false)
    }

    private func writeLogging() {
        do {
            try write()
            logger.debug("metrics textfile written", metadata: ["path": "\(path)"])
            if shared.lastFailure.withLock({ $0.take() }) != nil {
                logger.notice("metrics: \(path) written again")
            }
        } catch {
            let reason = "\(error)"
            let isNew = shared.lastFailure.withLock { last in
                defer { last = reason }
                return last != reason
            }
            if isNew {
                logger.warning("metrics: cannot write the textfile: \(reason); the next change tries again", metadata: ["path": "\(path)"])
            }
        }
    }

    /// What `markChanged` and the writer's task share.
    private final class Shared: Sendable {
        let isDirty = Atomic<Bool>(false)
        /// The reason the last write failed, if it did: logged once until it changes.
        let lastFailure = Mutex<String?>(nil)
        let wakeups: AsyncStream<Void>
        let wake: AsyncStream<Void>.Continuation

        init() {
            (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        /// A figure changed: one atomic exchange, and a wake only for the first change since
        /// the last write.
        func markChanged() {
            if !isDirty.exchange(true, ordering: .acquiringAndReleasing) {
                wake.yield()
            }
        }
    }
}

extension MetricsTextfileEdge {
    /// Rewrites the textfile at `path` of a daemon that is gone: `apphost_state` says
    /// `notRunning` and `apphost_healthy` 0, every other line as it was, so a crashed daemon's
    /// last figures never look alive (`apphostd record-exit` after a crash). Returns false when
    /// there is no file to rewrite.
    /// - Throws: `AtomicFile.Failure` naming the path and the system's reason.
    package static func markNotRunning(path: String) throws(AtomicFile.Failure) -> Bool {
        guard let bytes = try AtomicFile.read(path) else { return false }
        var lines: [Substring] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            guard let space = line.lastIndex(of: " ") else {
                lines.append(line)
                continue
            }
            let series = line[..<space]
            if series.hasPrefix("apphost_state{") {
                lines.append(series + (series.utf8.contains(sequence: #"state="notRunning""#.utf8) ? " 1" : " 0"))
            } else if series.hasPrefix("apphost_healthy{") {
                lines.append(series + " 0")
            } else {
                lines.append(line)
            }
        }
        try AtomicFile.write(Array(lines.joined(separator: "\n").utf8), to: path, permissions: 0o644, durable: false)
        return true
    }
}

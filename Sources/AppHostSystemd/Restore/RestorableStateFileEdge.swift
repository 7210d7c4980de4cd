import AppHost
import Logging
import ServiceLifecycle
import Synchronization

/// Writes the disk tier of `RestorableStateFiles` off the host's path, as a `Service`: `persist`
/// hands it a state and returns, and the writer's task writes it (atomically, with fsync).
///
/// States that arrive within `coalescing` of the first one, or while a write is under way,
/// coalesce to the newest: each is a whole state, so the newest is all the file needs, and a
/// state older than the last written (a lower generation, or the same one again) is never
/// written, so the file never goes back. The window turns a burst (a signal storm, a reload that
/// restarts services) into one write, spares a device's flash, and keeps the fsync, which holds
/// a thread of the cooperative pool, away from the requests that follow each other.
///
/// Put it in the daemon's `ServiceGroup` listed before the host, as `SystemdNotifyEdge` is:
/// the group shuts services down in reverse order, so the host terminates (and persists its last
/// state) before the writer is told to end. On graceful shutdown or cancellation the writer writes
/// what is pending before `run()` returns, and from then on `persist` writes on the caller's path
/// at once; either way every state is on disk before the group, and the process, ends.
///
/// Until `run()` starts, `persist` only holds the newest state: nothing reaches the disk, and a
/// program that never runs the writer keeps only the fd-store tier. Tests, and programs without a
/// service group, write with `RestorableStateFiles.persistNow(_:)`. Run it once.
public struct RestorableStateFileEdge: Service {
    /// The file it writes.
    public let path: String
    let directory: String
    let logger: Logger
    /// How long the writer waits after a state arrives before it writes the newest.
    let coalescing: Duration
    private let shared: Shared

    init(directory: String, path: String, coalescing: Duration, logger: Logger) {
        self.directory = directory
        self.path = path
        self.coalescing = coalescing
        self.logger = logger
        self.shared = Shared()
    }

    /// Writes the newest state handed over whenever one arrives, until graceful shutdown or
    /// cancellation; then writes what is still pending and returns.
    public func run() async {
        await withTaskCancellationOrGracefulShutdownHandler {
            for await _ in shared.wakeups {
                if coalescing > .zero {
                    // Cut short by a shutdown: what is pending is written at once.
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: coalescing) }
                }
                writePending()
            }
        } onCancelOrGracefulShutdown: { [shared] in
            shared.wake.finish()
        }
        if let state = shared.finish() { writeLogging(state) }
    }

    /// Hands `state` to the running writer; writes it at once when the writer has ended.
    func submit(_ state: RestorableState) {
        if shared.offer(state) {
            shared.wake.yield()
        } else {
            writeLogging(state)
        }
    }

    /// Takes the pending state and writes it with `lastWritten` held throughout, on the caller's
    /// path (the writer's task, or a sleep's request waiting for the disk): a caller that finds
    /// nothing pending knows the state taken before it is on disk (it waited for the lock).
    func writePending() {
        shared.lastWritten.withLock { (lastWritten: inout UInt64?) in
            guard let state = shared.takePending() else { return }
            writeLogging(state, holding: &lastWritten)
        }
    }

    /// Writes `state` now, on the caller's path, unless a state at least as new was written.
    /// - Throws: `AtomicFile.Failure` naming the path and the system's reason.
    func write(_ state: RestorableState) throws(AtomicFile.Failure) {
        try shared.lastWritten.withLock { (lastWritten: inout UInt64?) throws(AtomicFile.Failure) in
            try write(state, holding: &lastWritten)
        }
    }

    /// The write, with `lastWritten` (the lock's value) held by the caller.
    private func write(_ state: RestorableState, holding lastWritten: inout UInt64?) throws(AtomicFile.Failure) {
        if let lastWritten, state.generation <= lastWritten { return }
        try AtomicFile.makeDirectory(directory)
        try AtomicFile.write(state.encoded(), to: path)
        lastWritten = state.generation
    }

    private func writeLogging(_ state: RestorableState) {
        shared.lastWritten.withLock { writeLogging(state, holding: &$0) }
    }

    private func writeLogging(_ state: RestorableState, holding lastWritten: inout UInt64?) {
        do {
            try write(state, holding: &lastWritten)
            logger.debug("restorable state written", metadata: ["generation": "\(state.generation)"])
        } catch {
            logger.error("restorable state not written: \(error); a start after a stop or a reboot gets an older copy", metadata: ["generation": "\(state.generation)"])
        }
    }

    /// What `persist` and the writer's task share.
    private final class Shared: Sendable {
        /// The newest state not yet written, and whether the writer's run has ended.
        let queue = Mutex<(pending: RestorableState?, hasEnded: Bool)>((nil, false))
        /// The generation on disk; held while a write is under way, so writes never overlap.
        let lastWritten = Mutex<UInt64?>(nil)
        let wakeups: AsyncStream<Void>
        let wake: AsyncStream<Void>.Continuation

        init() {
            (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        /// Holds `state` for the writer unless a newer one waits; false when the writer has ended.
        func offer(_ state: RestorableState) -> Bool {
            queue.withLock { queue in
                guard !queue.hasEnded else { return false }
                if state.generation >= queue.pending?.generation ?? 0 { queue.pending = state }
                return true
            }
        }

        func takePending() -> RestorableState? {
            queue.withLock { queue in
                defer { queue.pending = nil }
                return queue.pending
            }
        }

        /// Ends the writer's run: returns what is pending; later states are written by `submit`.
        func finish() -> RestorableState? {
            queue.withLock { queue in
                queue.hasEnded = true
                defer { queue.pending = nil }
                return queue.pending
            }
        }
    }
}

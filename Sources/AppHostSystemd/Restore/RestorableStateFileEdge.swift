import AppHost
import AppHostSupport
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
    /// cancellation; then writes what is still pending and returns. The writes, and their
    /// `fsync`, run on this task (a thread of the cooperative pool), with no lock held: one
    /// write at a time is the write token's rule (`Shared.Queue.isWriting`), not a lock's.
    public func run() async {
        shared.start()
        await withTaskCancellationOrGracefulShutdownHandler {
            for await _ in shared.wakeups {
                if coalescing > .zero {
                    // Cut short by a shutdown, or by a durable persist that waits for the disk.
                    await cancelWhenGracefulShutdown { await shared.coalesce(for: coalescing) }
                }
                if let state = shared.takeToWrite() { drain(from: state) }
            }
        } onCancelOrGracefulShutdown: { [shared] in
            shared.wake.finish()
        }
        if let state = shared.finish() { drain(from: state) }
    }

    /// Hands `state` to the running writer. Before the writer runs it is only held; once the
    /// writer has ended it is written on the caller's path (or by the write under way).
    func submit(_ state: RestorableState) {
        switch shared.offer(state, durably: nil) {
        case .queued, .held: shared.wake.yield()
        case .written: break
        case .writeNow(let pending): drain(from: pending)
        }
    }

    /// Hands `state` to the running writer, which writes it without waiting out its window, and
    /// returns once a state at least as new is on disk (or its write failed, which is logged).
    /// Without a running writer (not started, or ended) the caller writes it.
    func submitDurably(_ state: RestorableState) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            switch shared.offer(state, durably: continuation) {
            case .queued, .held: shared.wake.yield()
            case .written: continuation.resume()
            case .writeNow(let pending): drain(from: pending)
            }
        }
    }

    /// Writes the state handed to `persist` and not yet written, on the caller's path: for a
    /// program that does not run the writer.
    func writePending() {
        if let state = shared.takeToWrite() { drain(from: state) }
    }

    /// Writes `state` now, on the caller's path, unless a state at least as new was written or
    /// a write is under way (then that write's holder writes the newest after it).
    /// - Throws: `AtomicFile.Failure` naming the path and the system's reason.
    func write(_ state: RestorableState) throws(AtomicFile.Failure) {
        guard case .writeNow(let first) = shared.offer(state, durably: nil, writingNow: true) else { return }
        if let failure = drain(from: first, returningItsFailure: true) { throw failure }
    }

    /// Holding the write token: writes `first`, then whatever newer arrived meanwhile, and
    /// gives the token back. A failure is logged, but `first`'s is returned instead when
    /// `returningItsFailure` (a caller that throws it).
    @discardableResult
    private func drain(from first: RestorableState, returningItsFailure: Bool = false) -> AtomicFile.Failure? {
        var failure: AtomicFile.Failure?
        var next: RestorableState? = first
        while let state = next {
            do {
                try writeFile(state)
                logger.debug("restorable state written", metadata: ["generation": "\(state.generation)"])
                next = shared.written(state.generation, attempted: state.generation)
            } catch {
                if returningItsFailure, state.generation == first.generation { failure = error } else { logFailure(error, state) }
                next = shared.written(nil, attempted: state.generation)
            }
        }
        return failure
    }

    private func writeFile(_ state: RestorableState) throws(AtomicFile.Failure) {
        try AtomicFile.makeDirectory(directory)
        try AtomicFile.write(state.encoded(), to: path)
    }

    private func logFailure(_ error: AtomicFile.Failure, _ state: RestorableState) {
        logger.error("restorable state not written: \(error); a start after a stop or a reboot gets an older copy", metadata: ["generation": "\(state.generation)"])
    }
}

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
    /// cancellation; then writes what is still pending and returns. The writes, and their
    /// `fsync`, run on this task (a thread of the cooperative pool), with no lock held.
    public func run() async {
        await withTaskCancellationOrGracefulShutdownHandler {
            for await _ in shared.wakeups {
                if coalescing > .zero {
                    // Cut short by a shutdown, or by a durable persist that waits for the disk.
                    await cancelWhenGracefulShutdown { await shared.coalesce(for: coalescing) }
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

    /// Hands `state` to the running writer, which writes it without waiting out its window, and
    /// returns once a state at least as new is on disk (or its write failed, which is logged);
    /// when the writer has ended, writes it on the caller's path.
    func submitDurably(_ state: RestorableState) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            switch shared.offerDurably(state, continuation) {
            case .written: continuation.resume()
            case .queued: shared.wake.yield()
            case .writerEnded:
                writeLogging(state)
                continuation.resume()
            }
        }
    }

    /// Takes the pending state and writes it: on the writer's task, or, for a program that
    /// does not run the writer, on the caller's path.
    func writePending() {
        guard let state = shared.takePending() else { return }
        writeLogging(state)
    }

    /// Writes `state` now, on the caller's path, unless a state at least as new was written.
    /// Not while the writer runs: two writers' renames could land out of order.
    /// - Throws: `AtomicFile.Failure` naming the path and the system's reason.
    func write(_ state: RestorableState) throws(AtomicFile.Failure) {
        guard shared.isNewer(state) else {
            // What is on disk is as new: the durable persists of this state are answered.
            shared.written(nil, attempted: state.generation)
            return
        }
        do {
            try AtomicFile.makeDirectory(directory)
            try AtomicFile.write(state.encoded(), to: path)
        } catch {
            shared.written(nil, attempted: state.generation)
            throw error
        }
        shared.written(state.generation, attempted: state.generation)
    }

    private func writeLogging(_ state: RestorableState) {
        do {
            try write(state)
            logger.debug("restorable state written", metadata: ["generation": "\(state.generation)"])
        } catch {
            logger.error("restorable state not written: \(error); a start after a stop or a reboot gets an older copy", metadata: ["generation": "\(state.generation)"])
        }
    }
}

import AppHost
import Synchronization

extension RestorableStateFileEdge {
    /// What `persist`, a durable persist and the writer's task share: one lock, held only to
    /// read or change this bookkeeping, never across a write or its `fsync`. One write at a time
    /// is the write token's rule: whoever takes it (the writer's task; a caller when no writer
    /// runs) writes, then writes what arrived meanwhile, and only then gives it back.
    final class Shared: Sendable {
        struct Queue {
            /// The newest state not yet written.
            var pending: RestorableState?
            /// The writer's run is under way: it writes what is handed over.
            var isRunning = false
            /// The writer's run has ended: states are written on the caller's path.
            var hasEnded = false
            /// The write token is taken: a write is under way, and its holder writes `pending`
            /// after it.
            var isWriting = false
            /// The newest generation on disk.
            var written: UInt64?
            /// Durable persists waiting for their generation's write.
            var waiters: [(generation: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
            /// The writer's coalescing wait, cut short by a durable persist.
            var coalescing: CheckedContinuation<Void, Never>?
            /// The coalescing wait's timer ran out (maybe before its continuation was stored).
            var isCoalescingOver = false
            /// A durable persist asked to write without waiting out the window.
            var isUrgent = false

            func isNewer(_ state: RestorableState) -> Bool {
                written.map { state.generation > $0 } ?? true
            }
        }

        /// What an offered state becomes.
        enum Offer {
            /// The running writer writes it: wake it.
            case queued
            /// Held: for the writer to come, or for the write under way, whose holder writes it next.
            case held
            /// A state at least as new is on disk already.
            case written
            /// The caller holds the write token: it writes this (the newest pending) now.
            case writeNow(RestorableState)
        }

        let queue = Mutex(Queue())
        let wakeups: AsyncStream<Void>
        let wake: AsyncStream<Void>.Continuation

        init() {
            (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        }

        /// Takes `state`, with `durably`'s continuation to answer once it is on disk. A state
        /// handed over before the writer runs is held for it, unless durably (nobody may be
        /// coming) or `writingNow`: then, as after the writer's end, the caller writes.
        func offer(_ state: RestorableState, durably: CheckedContinuation<Void, Never>?, writingNow: Bool = false) -> Offer {
            let (offer, coalescing) = queue.withLock { queue -> (Offer, CheckedContinuation<Void, Never>?) in
                guard queue.isNewer(state) else { return (.written, nil) }
                if state.generation >= queue.pending?.generation ?? 0 { queue.pending = state }
                if let durably { queue.waiters.append((state.generation, durably)) }
                if queue.isWriting { return (.held, nil) }
                if queue.isRunning, !writingNow {
                    guard durably != nil else { return (.queued, nil) }
                    queue.isUrgent = true
                    defer { queue.coalescing = nil }
                    return (.queued, queue.coalescing)
                }
                if !queue.isRunning, !queue.hasEnded, durably == nil, !writingNow { return (.held, nil) }
                return (takeToken(&queue).map(Offer.writeNow) ?? .held, nil)
            }
            coalescing?.resume()
            return offer
        }

        /// The newest pending state with the write token, when the token is free and there is one.
        func takeToWrite() -> RestorableState? {
            queue.withLock { queue in
                queue.isUrgent = false
                return queue.isWriting ? nil : takeToken(&queue)
            }
        }

        private func takeToken(_ queue: inout Queue) -> RestorableState? {
            guard let pending = queue.pending, queue.isNewer(pending) else {
                queue.pending = nil
                return nil
            }
            queue.pending = nil
            queue.isWriting = true
            return pending
        }

        /// After the token holder's write of `attempted`: `generation` is on disk (nil: the
        /// write failed). Answers the durable persists it settles (a failed write settles its
        /// own: they wait no longer), and returns the next state to write, keeping the token,
        /// or gives the token back.
        func written(_ generation: UInt64?, attempted: UInt64) -> RestorableState? {
            let (next, answered) = queue.withLock { queue -> (RestorableState?, [CheckedContinuation<Void, Never>]) in
                if let generation { queue.written = max(queue.written ?? 0, generation) }
                let limit = max(queue.written ?? 0, attempted)
                let answered = queue.waiters.filter { $0.generation <= limit }.map(\.continuation)
                queue.waiters.removeAll { $0.generation <= limit }
                queue.isWriting = false
                return (takeToken(&queue), answered)
            }
            for continuation in answered { continuation.resume() }
            return next
        }

        /// The writer's run begins.
        func start() {
            queue.withLock { $0.isRunning = true }
        }

        /// Waits `duration`, or less when a durable persist comes; at once when one waits.
        func coalesce(for duration: Duration) async {
            queue.withLock { $0.isCoalescingOver = false }
            await withDiscardingTaskGroup { group in
                group.addTask {
                    try? await Task.sleep(for: duration)
                    self.endCoalescing()
                }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = queue.withLock { queue -> Bool in
                        if queue.isUrgent || queue.isCoalescingOver { return true }
                        queue.coalescing = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
                group.cancelAll()
            }
        }

        /// Ends the coalescing wait, if one is under way.
        private func endCoalescing() {
            queue.withLock { queue in
                queue.isCoalescingOver = true
                defer { queue.coalescing = nil }
                return queue.coalescing
            }?.resume()
        }

        /// Ends the writer's run: the pending state with the write token, unless a write under
        /// way (whose holder writes it) or nothing is pending. Later states are written on the
        /// caller's path.
        func finish() -> RestorableState? {
            queue.withLock { queue in
                queue.hasEnded = true
                queue.isRunning = false
                return queue.isWriting ? nil : takeToken(&queue)
            }
        }
    }
}

import AppHost
import Synchronization

extension RestorableStateFileEdge {
    /// What `persist`, a durable persist and the writer's task share: one lock, held only to
    /// read or change this bookkeeping, never across a write or its `fsync`.
    final class Shared: Sendable {
        struct Queue {
            /// The newest state not yet written.
            var pending: RestorableState?
            /// The writer's run has ended: states are written on the caller's path.
            var hasEnded = false
            /// The newest generation on disk.
            var written: UInt64?
            /// Durable persists waiting for their generation's write.
            var waiters: [(generation: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
            /// The writer's coalescing wait, cut short by a durable persist.
            var coalescing: CheckedContinuation<Void, Never>?
            /// The coalescing wait's timer ran out (before its continuation was stored, maybe).
            var isCoalescingOver = false
            /// A durable persist asked to write without waiting out the window.
            var isUrgent = false
        }

        let queue = Mutex(Queue())
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

        enum DurableOffer { case written, queued, writerEnded }

        /// Holds `state` and `continuation` until a state at least as new is written, and cuts
        /// the writer's coalescing wait short.
        func offerDurably(_ state: RestorableState, _ continuation: CheckedContinuation<Void, Never>) -> DurableOffer {
            let (offer, coalescing) = queue.withLock { queue -> (DurableOffer, CheckedContinuation<Void, Never>?) in
                if let written = queue.written, written >= state.generation { return (.written, nil) }
                guard !queue.hasEnded else { return (.writerEnded, nil) }
                if state.generation >= queue.pending?.generation ?? 0 { queue.pending = state }
                queue.waiters.append((state.generation, continuation))
                queue.isUrgent = true
                defer { queue.coalescing = nil }
                return (.queued, queue.coalescing)
            }
            coalescing?.resume()
            return offer
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

        func takePending() -> RestorableState? {
            queue.withLock { queue in
                queue.isUrgent = false
                defer { queue.pending = nil }
                return queue.pending
            }
        }

        /// Whether `state` is newer than what is on disk.
        func isNewer(_ state: RestorableState) -> Bool {
            queue.withLock { queue in queue.written.map { state.generation > $0 } ?? true }
        }

        /// After a write of `attempted`: `generation` is on disk (nil: the write failed). Resumes
        /// the durable persists it answers; a failed write answers its own, which wait no longer.
        func written(_ generation: UInt64?, attempted: UInt64) {
            let answered = queue.withLock { queue -> [CheckedContinuation<Void, Never>] in
                if let generation { queue.written = max(queue.written ?? 0, generation) }
                let limit = max(queue.written ?? 0, attempted)
                let (done, waiting) = (queue.waiters.filter { $0.generation <= limit }, queue.waiters.filter { $0.generation > limit })
                queue.waiters = waiting
                return done.map(\.continuation)
            }
            for continuation in answered { continuation.resume() }
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

import Synchronization

/// Something besides the host that `READY=1` waits for, marked ready by the program that embeds
/// the host: its HTTP server listening, say (Hummingbird's `onServerRunning`). Give it to
/// `SystemdNotifyEdge(host:notifier:waitingFor:)`; until every condition is ready, the
/// launch's `READY=1` is held and `STATUS=` names what it waits for.
public final class ReadinessCondition: Sendable {
    /// Shown in `STATUS=` while not ready (`waiting for http`).
    public let name: String
    private let state = Mutex<(isReady: Bool, waiters: [Int: CheckedContinuation<Void, Never>], nextID: Int)>((false, [:], 0))

    /// A condition, not ready yet, called `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// Whether `markReady()` was called.
    public var isReady: Bool { state.withLock { $0.isReady } }

    /// Marks the condition met; later calls do nothing. Safe from any task or thread.
    public func markReady() {
        let waiters = state.withLock { state in
            state.isReady = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the condition is ready, or at once when the task is cancelled.
    func waitUntilReady() async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.isReady || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

import Synchronization

/// A FIFO async lock: callers pass one at a time, in arrival order. It is what makes the host's
/// actor a single serial event path even though fan-outs suspend.
final class SerialGate: Sendable {
    private struct State {
        var isHeld = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }

    private let state = Mutex(State())

    /// Waits for its turn; every `acquire` must be followed by one `release`.
    func acquire() async {
        let acquired = state.withLock { state in
            if state.isHeld { return false }
            state.isHeld = true
            return true
        }
        if acquired { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquiredNow = state.withLock { state in
                if state.isHeld {
                    state.waiters.append(continuation)
                    return false
                }
                state.isHeld = true
                return true
            }
            if acquiredNow { continuation.resume() }
        }
    }

    /// Lets the next caller in.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
                state.isHeld = false
                return nil
            }
            let next = state.waiters[state.head]
            state.head += 1
            return next
        }
        next?.resume()
    }
}

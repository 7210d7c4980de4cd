import Dispatch
import Synchronization

/// One value handed from the edge loop's thread to a caller that blocks for it: the new
/// thread's kernel thread id at start, an attach's errno for `add`. A one-shot wait of
/// microseconds on a semaphore, not a sleep.
final class ThreadHandoff<Value: Sendable>: Sendable {
    private let value: Mutex<Value?> = Mutex(nil)
    private let handed = DispatchSemaphore(value: 0)

    /// Called once, by the loop's thread.
    func hand(_ value: Value) {
        self.value.withLock { $0 = value }
        handed.signal()
    }

    /// Blocks the caller until `hand` ran; returns what it handed.
    func wait() -> Value {
        handed.wait()
        return value.withLock { $0! }
    }
}

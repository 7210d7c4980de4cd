import Dispatch
import Glibc
import Synchronization

/// Lets an initializer wait until its new thread has started and published its kernel thread id.
/// A one-shot wait of microseconds on a semaphore, not a sleep.
final class ThreadStartLatch: Sendable {
    private let threadID = Mutex<pid_t>(0)
    private let started = DispatchSemaphore(value: 0)

    /// Called once by the new thread.
    func open(threadID: pid_t) {
        self.threadID.withLock { $0 = threadID }
        started.signal()
    }

    /// Blocks the caller until `open` ran; returns the published thread id.
    func waitForThreadID() -> pid_t {
        started.wait()
        return threadID.withLock { $0 }
    }
}

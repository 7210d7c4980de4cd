import Synchronization

/// Whether `operation` finishes within `timeout`. Unlike a task group, this does not wait for
/// an operation that never ends (such as awaiting a hung task's value).
public func completes(within timeout: Duration, _ operation: @escaping @Sendable () async -> Void) async -> Bool {
    let outcome = Mutex<CheckedContinuation<Bool, Never>?>(nil)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        outcome.withLock { $0 = continuation }
        let finish: @Sendable (Bool) -> Void = { value in outcome.withLock { $0.take() }?.resume(returning: value) }
        // Unstructured on purpose: either may never end, and the first to end decides.
        Task {
            await operation()
            finish(true)
        }
        Task {
            try? await Task.sleep(for: timeout)
            finish(false)
        }
    }
}

import Synchronization

// The tests' bounded waits, in one place. Each returns as soon as what it waits for happens; the
// bound only ends a failing test. Await an event where there is one (`completes`, `nextValue`);
// poll (`eventually`) only for state without one: another process's files, systemd, the journal.

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

/// The next value of `stream`, or nil when it ends or `timeout` passes first.
public func nextValue<T: Sendable>(_ stream: AsyncStream<T>, within timeout: Duration = .seconds(3)) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Calls `condition` every `interval` until it returns true or `timeout` passes; whether it
/// became true in time. For state another task or process changes without an event to await.
public func eventually(
    timeout: Duration = .seconds(5), every interval: Duration = .milliseconds(5), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if try await condition() { return true }
        if clock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
}

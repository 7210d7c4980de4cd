import Synchronization

/// Things that happen during a test (hook calls, log records, D-Bus calls), in order, with a way
/// to await the one a test expects instead of sleeping or polling.
public final class TestLog<Element: Sendable>: Sendable {
    private struct Waiter {
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<Element?, Never>
    }

    private struct State {
        var elements: [Element] = []
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// An empty log.
    public init() {}

    /// Everything appended so far, in order.
    public var all: [Element] { state.withLock { $0.elements } }

    /// How many elements were appended so far.
    public var count: Int { state.withLock { $0.elements.count } }

    /// Appends `element` and wakes whoever waits for one like it.
    public func append(_ element: Element) {
        let ready = state.withLock { state -> [CheckedContinuation<Element?, Never>] in
            state.elements.append(element)
            let matching = state.waiters.filter { $0.value.predicate(element) }
            for id in matching.keys { state.waiters[id] = nil }
            return matching.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: element) }
    }

    /// The first element at position `start` or later, already there or still to come, that
    /// matches `predicate`; nil when `timeout` passes first. The timeout only bounds a failing
    /// test: a passing one returns as soon as the element is there.
    public func first(
        from start: Int = 0,
        timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> Element? {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskGroup(of: Element?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let existing = self.state.withLock { state -> Element? in
                        if start < state.elements.count, let found = state.elements[start...].first(where: predicate) {
                            return found
                        }
                        state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                        return nil
                    }
                    if let existing { continuation.resume(returning: existing) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.releaseWaiter(id)
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            self.releaseWaiter(id)
            return result
        }
    }

    private func releaseWaiter(_ id: Int) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: nil)
    }
}

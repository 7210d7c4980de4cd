import Synchronization

/// Things that happen during a test (hook calls, log records, D-Bus calls), in order, with a way
/// to await the one a test expects instead of sleeping or polling.
///
/// Predicates run outside the log's lock, so a predicate may read this log or another.
public final class TestLog<Element: Sendable>: Sendable {
    private struct Waiter {
        /// Only elements at this position or later match.
        let start: Int
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<Element?, Never>
    }

    private struct State {
        var elements: [Element] = []
        var waiters: [Int: Waiter] = [:]
        /// Waits whose time ran out before they registered: they end with nil at once.
        var expired: Set<Int> = []
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
        let (index, waiters) = state.withLock { state in
            state.elements.append(element)
            return (state.elements.count - 1, state.waiters)
        }
        let matching = waiters.filter { $0.value.start <= index && $0.value.predicate(element) }.map(\.key)
        guard !matching.isEmpty else { return }
        let ready = state.withLock { state in matching.compactMap { state.waiters.removeValue(forKey: $0)?.continuation } }
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
        let result = await withTaskGroup(of: Element?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    self.register(id, start: start, predicate: predicate, continuation)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.expire(id)
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            self.expire(id)
            return result
        }
        state.withLock { _ = $0.expired.remove(id) }
        return result
    }

    /// Resumes `continuation` with a matching element that is already there, or with nil when
    /// the wait expired, or leaves it waiting for one to come.
    private func register(_ id: Int, start: Int, predicate: @escaping @Sendable (Element) -> Bool, _ continuation: CheckedContinuation<Element?, Never>) {
        var checked = start
        while true {
            let (snapshot, count) = state.withLock { state in
                (checked < state.elements.count ? Array(state.elements[checked...]) : [], state.elements.count)
            }
            if let found = snapshot.first(where: predicate) {
                continuation.resume(returning: found)
                return
            }
            checked = max(checked, count)
            // Registers unless more arrived since the snapshot (then looks at those first).
            let outcome: Bool? = state.withLock { state in
                if state.expired.contains(id) { return false }
                guard state.elements.count <= checked else { return nil }
                state.waiters[id] = Waiter(start: start, predicate: predicate, continuation: continuation)
                return true
            }
            switch outcome {
            case true?: return
            case false?: return continuation.resume(returning: nil)
            case nil: continue
            }
        }
    }

    /// Ends wait `id` with nil: now if it waits, or as soon as it registers.
    private func expire(_ id: Int) {
        let waiter = state.withLock { state in
            state.expired.insert(id)
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.continuation.resume(returning: nil)
    }
}

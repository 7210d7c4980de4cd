import Synchronization

/// A one-way boolean shared across threads.
final class Flag: Sendable {
    private let value = Mutex(false)

    /// Sets the flag.
    func set() { value.withLock { $0 = true } }

    /// Whether `set()` was called.
    var isSet: Bool { value.withLock { $0 } }
}

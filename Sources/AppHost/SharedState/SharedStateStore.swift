import Synchronization

/// The host's shared values by key (`SharedStateKey`): one per host, so they outlive any
/// service instance and a reload. Reads and writes never wait for the host's loop.
public final class SharedStateStore: Sendable {
    private struct Values: Sendable {
        var byKey: [ObjectIdentifier: any Sendable] = [:]
        /// A restorable key's bytes from the previous run, by key name, until the key is read.
        var restored: [String: [UInt8]] = [:]
        /// A restorable key's bytes set since the host last took them, by key name.
        var staged: [String: [UInt8]] = [:]
    }

    private let values = Mutex(Values())
    /// Called after a restorable key was set (the host stages its restorable state).
    private let onRestorableChange = Mutex<(@Sendable () -> Void)?>(nil)

    /// An empty store.
    init() {}

    /// `body` runs after each set of a restorable key; until it is given, none is staged.
    func whenRestorableChanges(_ body: @escaping @Sendable () -> Void) {
        onRestorableChange.withLock { $0 = body }
    }

    /// The value of `key`: the last one set, else what the previous run kept (a restorable
    /// key), else its default.
    public subscript<Key: SharedStateKey>(_ key: Key.Type) -> Key.Value {
        values.withLock { values in
            if let value = values.byKey[ObjectIdentifier(key)] as? Key.Value { return value }
            if let restorable = key as? any RestorableSharedStateKey.Type, let value = Self.restore(restorable, from: &values) as? Key.Value {
                values.byKey[ObjectIdentifier(key)] = value
                return value
            }
            return key.defaultValue
        }
    }

    /// Sets `key` to `value`, without telling anyone: `ApplicationHandle.setSharedState` also
    /// publishes the change. For seeding a host before it runs, and for tests.
    public func set<Key: SharedStateKey>(_ key: Key.Type, to value: Key.Value) {
        // Without a restorable state to ride on (no storage), nothing is staged.
        let notify = onRestorableChange.withLock { $0 }
        let isStaged = values.withLock { values in
            values.byKey[ObjectIdentifier(key)] = value
            guard notify != nil, let restorable = key as? any RestorableSharedStateKey.Type else { return false }
            Self.stage(restorable, value, into: &values)
            return true
        }
        if isStaged { notify?() }
    }

    private static func restore<Key: RestorableSharedStateKey>(_ key: Key.Type, from values: inout Values) -> Key.Value? {
        guard let bytes = values.restored.removeValue(forKey: key.name) else { return nil }
        return key.decode(bytes)
    }

    private static func stage<Key: RestorableSharedStateKey>(_ key: Key.Type, _ value: any Sendable, into values: inout Values) {
        guard let value = value as? Key.Value else { return }
        let bytes = key.encode(value)
        values.staged[key.name] = bytes
        values.restored[key.name] = nil
    }

    /// The previous run's bytes of restorable keys, by name (the host's restore).
    func restore(_ bytes: [String: [UInt8]]) {
        values.withLock { $0.restored = bytes }
    }

    /// The bytes of restorable keys set since the last call, by name.
    func takeStaged() -> [String: [UInt8]] {
        values.withLock { values in
            defer { values.staged = [:] }
            return values.staged
        }
    }
}

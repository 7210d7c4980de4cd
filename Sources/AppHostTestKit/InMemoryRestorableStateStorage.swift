import AppHost

/// A `RestorableStateStorage` in memory, for tests: seed it with what a previous run kept to
/// launch services with restored bytes, and read (or await) what the host kept and persisted.
///
/// ```swift
/// let storage = InMemoryRestorableStateStorage(services: ["counter": [3]])
/// try await withTestHost(services, configuration: .init(restorableState: storage)) { host in
///     try await host.launched()   // counter's launch options carry restoredState [3]
/// }
/// #expect(storage.latest?.services["counter"] == [4])
/// ```
public final class InMemoryRestorableStateStorage: RestorableStateStorage {
    /// What the storage held before the host ran.
    public let seeded: RestorableState?
    /// Every state the host kept (its fast tier), in order; awaitable with `first(where:)`.
    public let kept = TestLog<RestorableState>()
    /// Every state the host persisted (its durable tier), in order.
    public let persisted = TestLog<RestorableState>()

    /// A storage holding `state`, as if a previous run had kept it (nil: nothing kept).
    public init(_ state: RestorableState? = nil) {
        seeded = state
    }

    /// A storage holding the services' bytes and, for a restore after an unclean exit, the
    /// lifecycle given.
    public convenience init(services: [String: [UInt8]], isInBackground: Bool = false, isSessionLocked: Bool = false, sessionLockReason: String = "") {
        self.init(RestorableState(generation: 1, isInBackground: isInBackground, isSessionLocked: isSessionLocked, sessionLockReason: sessionLockReason, services: services))
    }

    /// The newest state kept or persisted, else the seeded one: what a next run would restore.
    public var latest: RestorableState? {
        [seeded, kept.all.last, persisted.all.last].compactMap { $0 }.max { $0.generation < $1.generation }
    }

    /// The newest state, as a storage gives it to the next run.
    public func restore(warning: (String) -> Void) -> RestorableState? { latest }

    /// Records `state` as kept.
    public func keep(_ state: RestorableState) throws { kept.append(state) }

    /// Records `state` as persisted.
    public func persist(_ state: RestorableState) { persisted.append(state) }
}

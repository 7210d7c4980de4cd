/// Where the host keeps its `RestorableState` between runs. The core only asks; the daemon gives
/// it systemd's fd store and a file in the state directory (`RestorableStateFiles` in
/// AppHostSystemd), the test kit an in-memory one. Without one, nothing is restored.
public protocol RestorableStateStorage: Sendable {
    /// What the previous run kept, the newest copy if there are several; nil when there is none.
    /// A copy that cannot be used (damaged, too large, from a newer format) is skipped and
    /// described through `warning`; this never throws and never blocks for long.
    func restore(warning: (String) -> Void) -> RestorableState?

    /// Keeps `state` where the death of this process cannot lose it. Called on the host's loop at
    /// the end of every request that changed the state, before the request's status is
    /// reported, so it must be fast (no disk write).
    func keep(_ state: RestorableState) throws

    /// Makes `state` last across a stop and a reboot. Called after the status is reported, when
    /// the host goes to the background, on a memory warning and at terminate; may return before
    /// the write is done, but the writes must land in order, and all of them before the process
    /// exits cleanly.
    func persist(_ state: RestorableState)

    /// Makes `state` last across a stop, a reboot and a power cut before it returns: what the
    /// host awaits before it answers a request after which the machine may sleep or shut down
    /// (logind's delay inhibitor is released on that answer). Called on the host's loop, which
    /// waits; a newer state than `state` on disk answers it too.
    func persistDurably(_ state: RestorableState) async
}

extension RestorableStateStorage {
    /// Hands `state` to `persist(_:)`: right for a storage whose `persist` is done when it
    /// returns (the test kit's, one in memory); a storage that writes later must override it.
    public func persistDurably(_ state: RestorableState) async {
        persist(state)
    }
}

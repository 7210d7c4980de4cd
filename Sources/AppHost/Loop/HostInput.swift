import ServiceContextModule

/// Everything the host's loop waits for arrives on one stream, as one of these.
enum HostInput: Sendable {
    /// A request from the API (signals, the embedding program, tests), with the context its
    /// hooks run in (its request id among it).
    case request(HostRequest, context: ServiceContext)
    /// A run made all its calls.
    case runFinished(token: Int)
    /// A call the loop stopped waiting for returned after all; `context` is its request's.
    case lateAnswer(serviceID: Int, hook: String, HookResult, context: ServiceContext?)
    /// A service published a session lock change on the bus (synchronously, from its hook or
    /// run loop): handled within the request in progress, or as a request of its own.
    case sessionLockChanged(SessionLockDidChange)
    /// Services handed the host bytes to keep (`ApplicationHandle.keepRestorableState(_:)`)
    /// while the loop was idle: one nudge per batch. Bytes kept during a request send none;
    /// the request keeps them at its end.
    case restorableStateStaged
    /// A service reported its health (`ApplicationHandle.reportUnhealthy(_:)`, `reportHealthy()`).
    case healthReported
    /// A service's run loop ended on its own (the `runLoopID`th start of it).
    case runLoopEnded(serviceID: Int, runLoopID: Int, RunLoopEnding)
    /// A deadline timer armed for this instant fired.
    case deadline(ContinuousClock.Instant)
}

extension PluggableApplicationHost {
    /// The machine is about to sleep or shut down: the services go to the background
    /// (`willResignActive`, `didEnterBackground`) unless they are there, and the restorable state
    /// is handed to storage to be written to disk. The host stays in the background until
    /// `machineDidResume(from:)`; a background or foreground request carried out meanwhile
    /// (a `SIGUSR1`) changes only where it returns then. Its cause is `kind` (`CAUSE=sleep`).
    /// Refused once a terminate is pending (the terminate saves the state) and during the launch.
    public func prepareForMachineSleep(_ kind: MachineSleepKind) async throws(IllegalTransition) {
        _ = try await send(cause: kind.rawValue) { .lifecycle(.prepareForSleep(kind), reply: $0) }.get()
    }

    /// The machine is awake again after `prepareForMachineSleep(kind)` (for `.shutdown`: the
    /// shutdown did not happen); nil when whatever it prepared for is over without a word (the
    /// source went away). Once no preparation is left, the host returns to the state it had,
    /// as changed by the requests since: `willEnterForeground`, `didBecomeActive` when that is
    /// the foreground. Cause `resume`. Nothing happens without a preparation.
    public func machineDidResume(from kind: MachineSleepKind?) async throws(IllegalTransition) {
        _ = try await send(cause: "resume") { .lifecycle(.resume(kind), reply: $0) }.get()
    }
}

/// One step of a request, performed by the host's loop in the order the machine gives.
package enum LifecycleAction: Sendable, Hashable {
    /// Move the machine (and what services see as the state) to this state.
    case move(to: ApplicationState)
    /// Fan this event out; its record reports the move from `from` to `to`.
    case deliver(LifecycleEvent, from: ApplicationState, to: ApplicationState)
    /// The launch flow: each service's launch steps in registration order, rolled back on a
    /// required service's failure; the request `finishLaunch` follows its success.
    case launchServices
    /// `willTerminate` to every service in reverse order, each waited for under the terminate
    /// deadline, and the clean exit recorded.
    case terminateServices
    /// The host trims its own heap after the services heard the memory warning.
    case trimHeap(MemoryWarningLevel)
    /// The session's protected data became available (`true`) or unavailable.
    case setProtectedDataAvailable(Bool)
    /// Why the session is locked, for the status; nil once unlocked.
    case setSessionLockReason(String?)
    /// The machine's sleep begins, changes (the state to return to, the preparations left) or
    /// ends (nil).
    case setSleep(MachineSleep?)
    /// Parse, validate and apply the new configuration as one transaction.
    case reloadConfiguration
    /// At the end of the request, write the restorable state to disk even if only services'
    /// bytes changed (the host went to the background, or memory is short).
    case persistRestorableState
    /// As `persistRestorableState`, and the request answers only once the state is on disk
    /// (`RestorableStateStorage.persistDurably(_:)`): the machine may sleep or lose power right
    /// after the answer.
    case persistRestorableStateDurably
    /// Start the request's service's run loop again.
    case restartRunLoop
    /// Restart the request's service whole: `willTerminate` to its instance, then a new one
    /// from its factory, launched into the host's state; its supervision carries over.
    case restartInstance
    /// The request's service's failures so far no longer count against its restart policy.
    case forgetFailures
    /// `willTerminate` to the request's service, then it is disabled for `reason`.
    case stopService(reason: String)
    /// A terminate is pending: say so (`STOPPING=1`), and nothing but it runs from now on.
    case setTerminatePending
    /// Refuse every queued request: terminate goes first.
    case dropQueuedRequests
}

/// One step of a request, performed by the host's loop in the order the machine gives.
package enum LifecycleAction: Sendable, Hashable {
    /// Move the machine (and what services see as the state) to this state.
    case move(to: ApplicationState)
    /// Fan this event out; its record reports the move from `from` to `to`.
    case deliver(LifecycleEvent, from: ApplicationState, to: ApplicationState)
    /// The launch flow: each service's launch steps in registration order, rolled back on a
    /// required service's failure; the machine's `launchCompletionActions` follow its success.
    case launchServices
    /// `willTerminate` to every service in reverse order, each waited for under the terminate
    /// deadline, and the clean exit recorded.
    case terminateServices
    /// The host trims its own heap after the services heard the memory warning.
    case trimHeap(MemoryWarningLevel)
    /// The session's protected data became available (`true`) or unavailable.
    case setProtectedDataAvailable(Bool)
    /// Parse, validate and apply the new configuration as one transaction.
    case reloadConfiguration
}

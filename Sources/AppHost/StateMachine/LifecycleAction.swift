/// One step of a lifecycle change, performed by the host in the order the machine gives.
package enum LifecycleAction: Sendable, Hashable {
    /// Move the machine (and what services see as the state) to this state.
    case move(to: ApplicationState)
    /// Fan this event out; its record reports the move from `from` to `to`.
    case deliver(LifecycleEvent, from: ApplicationState, to: ApplicationState)
}

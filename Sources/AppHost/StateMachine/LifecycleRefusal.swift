/// A request the lifecycle state machine refuses in its current state, and why.
package struct LifecycleRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was asked.
    package let request: LifecycleRequest
    /// The state the machine was in.
    package let state: ApplicationState
    /// Refused because a terminate is pending, whatever the state.
    package let isTerminatePending: Bool
    /// Why, for the log.
    package let reason: String

    /// The refusal as the host's API reports it; a host with a terminate pending counts as
    /// terminating.
    package var illegalTransition: IllegalTransition {
        IllegalTransition(from: isTerminatePending ? .terminating : state, to: request.target(from: state))
    }

    package var description: String { "\(request) refused while \(isTerminatePending ? "terminating" : "\(state)"): \(reason)" }
}

/// A request the lifecycle state machine refuses in its current state, and why.
package struct LifecycleRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was asked.
    package let request: LifecycleRequest
    /// The state the machine was in.
    package let state: ApplicationState
    /// Why, for the log.
    package let reason: String

    /// The refusal as the host's API reports it.
    package var illegalTransition: IllegalTransition {
        IllegalTransition(from: state, to: request.target(from: state))
    }

    package var description: String { "\(request) refused while \(state): \(reason)" }
}

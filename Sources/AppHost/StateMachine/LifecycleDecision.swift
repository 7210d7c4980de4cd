/// The lifecycle state machine's answer to a request.
package enum LifecycleDecision: Sendable, Hashable {
    /// Carry out these steps, in order; none when the request is already met (a no-op).
    case perform([LifecycleAction])
    /// Not in this state.
    case refuse(LifecycleRefusal)
}

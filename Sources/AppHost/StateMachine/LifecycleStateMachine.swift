/// The lifecycle graph `notRunning → launching → active ⇄ inactive ⇄ background`, and from any
/// running state `→ terminating → notRunning`.
///
/// It only answers whether a step is legal and records the current state; the host decides
/// which events a step emits. Asking for the current state is a no-op, never a duplicate event.
public struct LifecycleStateMachine: Sendable, Hashable {
    /// The current state.
    public private(set) var state: ApplicationState

    /// A machine that starts in `state` (normally `.notRunning`).
    public init(state: ApplicationState = .notRunning) {
        self.state = state
    }

    /// Whether the lifecycle has an edge `from → to`. A state is never legal to itself: that
    /// request is a no-op, which `transition(to:)` reports separately.
    public static func isLegal(from: ApplicationState, to: ApplicationState) -> Bool {
        switch (from, to) {
        case (.notRunning, .launching),
            (.launching, .active),
            (.active, .inactive),
            (.inactive, .active),
            (.inactive, .background),
            (.background, .inactive),
            (.launching, .terminating),
            (.active, .terminating),
            (.inactive, .terminating),
            (.background, .terminating),
            (.terminating, .notRunning):
            true
        default:
            false
        }
    }

    /// Moves to `target`. Returns `false` (and changes nothing) when already there.
    /// - Throws: `IllegalTransition` when the lifecycle has no such edge.
    @discardableResult
    public mutating func transition(to target: ApplicationState) throws(IllegalTransition) -> Bool {
        if target == state { return false }
        guard Self.isLegal(from: state, to: target) else {
            throw IllegalTransition(from: state, to: target)
        }
        state = target
        return true
    }
}

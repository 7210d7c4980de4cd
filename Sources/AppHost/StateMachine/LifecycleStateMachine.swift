/// The lifecycle graph `notRunning → launching → active ⇄ inactive ⇄ background`, a launch
/// straight into the background (a restore), and from any running state
/// `→ terminating → notRunning`, with the rules of every request the host takes.
///
/// The host's loop asks the machine about each request (`decide(_:)`), supervision's steps and
/// an operator's restart among them, and gets the steps that carry it out, or the refusal and
/// its reason; it asks the machine what to do on each turn (`nextTurn`). The loop holds no rule
/// of its own and only performs steps. Asking for where the machine already is yields no step: a no-op, never a
/// duplicated event. Once a terminate is pending, the machine refuses everything but the
/// terminate and the launch's own steps.
package struct LifecycleStateMachine: Sendable, Hashable {
    /// The current state.
    package private(set) var state: ApplicationState
    /// False while the session is locked: the protected-data events went out.
    package private(set) var isProtectedDataAvailable: Bool
    /// Why the session is locked, as the status says it; nil while unlocked or never said.
    package private(set) var sessionLockReason: String?
    /// A terminate arrived; it runs next, and it is the last request.
    package private(set) var isTerminatePending: Bool
    /// The machine prepares to sleep or shut down, and where the host goes at the resume; nil
    /// while it is awake.
    package private(set) var sleep: MachineSleep?

    /// A machine that starts in `state` (normally `.notRunning`), the session unlocked and no
    /// terminate pending unless said (tests start it anywhere).
    package init(
        state: ApplicationState = .notRunning, isProtectedDataAvailable: Bool = true, sessionLockReason: String? = nil, isTerminatePending: Bool = false,
        sleep: MachineSleep? = nil
    ) {
        self.state = state
        self.isProtectedDataAvailable = isProtectedDataAvailable
        self.sessionLockReason = sessionLockReason
        self.isTerminatePending = isTerminatePending
        self.sleep = sleep
    }

    /// Whether the lifecycle has an edge `from → to`. A state is never legal to itself: that
    /// request is a no-op, which `transition(to:)` reports separately.
    package static func isLegal(from: ApplicationState, to: ApplicationState) -> Bool {
        switch (from, to) {
        case (.notRunning, .launching),
            (.launching, .active),
            (.launching, .background),
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
    package mutating func transition(to target: ApplicationState) throws(IllegalTransition) -> Bool {
        if target == state { return false }
        guard Self.isLegal(from: state, to: target) else {
            throw IllegalTransition(from: state, to: target)
        }
        state = target
        return true
    }

    /// Records that the protected-data events of a lock (`false`) or an unlock went out.
    package mutating func setProtectedDataAvailable(_ available: Bool) {
        isProtectedDataAvailable = available
    }

    /// Records why the session is locked.
    package mutating func setSessionLockReason(_ reason: String?) {
        sessionLockReason = reason
    }

    /// Records the machine's sleep: begun, changed or over (nil).
    package mutating func setSleep(_ sleep: MachineSleep?) {
        self.sleep = sleep
    }

    /// Records that a terminate arrived.
    package mutating func setTerminatePending() {
        isTerminatePending = true
    }
}

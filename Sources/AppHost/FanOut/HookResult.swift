/// What one service's hook did.
enum HookResult: Sendable, Equatable {
    /// Returned; launch and update hooks carry their answer, other hooks `true`.
    case returned(Bool)
    /// Threw; the error as text.
    case threw(String)
    /// Still running when its deadline passed; the host moved on.
    case overran(Duration)
    /// Not waited for: an earlier hook of the service still runs; the call is queued behind it.
    case deferred
    /// Not called: the service is disabled.
    case skipped
    /// Still running when terminate came during a launch; the host stopped waiting.
    case abandoned
}

/// What an input means to a caller that waits for something: handled in
/// `HostLoop.take(_:group:)`, the one place every input is.
enum HostInputEffect {
    /// Handled here (a request queued, a late answer or lock change booked).
    case nothing
    /// A run, not one of a busy service's backlog, made all its calls.
    case runFinished(token: Int)
    /// A deadline wake: whoever waits looks at the clock.
    case deadlinePassed
}

/// How a service's `run(_:)` ended on its own (not cancelled by the host).
enum RunLoopEnding: Sendable, Hashable {
    /// It returned.
    case returned
    /// It threw this error (as text).
    case threw(String)
}

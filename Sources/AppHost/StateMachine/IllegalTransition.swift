/// A refused state change: the lifecycle has no edge from `from` to `to`.
public struct IllegalTransition: Error, Hashable, Sendable, CustomStringConvertible {
    /// The state the machine was in.
    public let from: ApplicationState
    /// The state that was asked for.
    public let to: ApplicationState

    public var description: String { "illegal lifecycle transition \(from) → \(to)" }
}

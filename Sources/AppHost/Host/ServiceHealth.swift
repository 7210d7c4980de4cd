/// How one service is doing.
public struct ServiceHealth: Sendable, Hashable {
    /// Whether it gets events.
    public enum Condition: Sendable, Hashable {
        /// It gets events.
        case healthy
        /// It failed to launch (or a reload could not restart it) and gets no further events.
        case disabled(reason: String)
    }

    /// The instance name.
    public let name: String
    /// Whether it is required.
    public let isRequired: Bool
    /// Healthy or disabled.
    public var condition: Condition
    /// Its last overrun, if any.
    public var lastOverrun: Overrun?
    /// Its last thrown hook error, as text.
    public var lastError: String?

    /// Whether it gets events: not disabled.
    public var isEnabled: Bool { condition == .healthy }
}

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
    /// Its last thrown hook or run-loop error, as text.
    public var lastError: String?
    /// Its run loop's restarts in this run of the host (`RestartPolicy`).
    public var restarts = 0
    /// The restart that waits, while one does.
    public var pendingRestart: RestartAttempt?
    /// Why its restarts gave way (`failed 6 times in 60s`): a required service then makes the
    /// host unhealthy; an optional one is also disabled.
    public var failure: String?

    /// Whether it gets events: not disabled.
    public var isEnabled: Bool { condition == .healthy }
}

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
    /// The registry type it was built from (`ServiceDescriptor.type`).
    public var type = ""
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
    /// What it last said about its own health (`ApplicationHandle.reportUnhealthy(_:)`); nil
    /// while it says nothing or `reportHealthy()`.
    public var healthReport: String?
    /// The hook it is still inside past that hook's deadline, and since when; nil otherwise.
    public var busyHook: String?
    /// Since when it is inside `busyHook`.
    public var busySince: ContinuousClock.Instant?
    /// Why its restarts gave way (`failed 6 times in 60s`): a required service then makes the
    /// host unhealthy; an optional one is also disabled.
    public var failure: String?

    /// Whether it gets events: not disabled.
    public var isEnabled: Bool {
        // A match, not `==`: the fan-out asks this per service per event, and `==` copies.
        if case .healthy = condition { true } else { false }
    }

    /// Equal when what `STATUS=` and the health depend on is: its own report and the hook it is
    /// stuck in are read from the status (`apphostd status`), never a reason for a new `STATUS=`.
    public static func == (lhs: ServiceHealth, rhs: ServiceHealth) -> Bool {
        lhs.name == rhs.name && lhs.isRequired == rhs.isRequired && lhs.type == rhs.type && lhs.condition == rhs.condition
            && lhs.lastOverrun == rhs.lastOverrun && lhs.lastError == rhs.lastError && lhs.restarts == rhs.restarts
            && lhs.pendingRestart == rhs.pendingRestart && lhs.failure == rhs.failure
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(condition)
        hasher.combine(restarts)
        hasher.combine(failure)
    }
}

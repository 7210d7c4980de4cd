/// Published by the host on the bus after every event it fanned out: the audit record the
/// `logger` service writes and `analytics` counts.
public struct LifecycleEventRecord: Sendable, Hashable {
    /// The event; launch is reported once as `didFinishLaunching` after all launch steps.
    public let event: LifecycleEvent
    /// The state before the event.
    public let from: ApplicationState
    /// The state after it.
    public let to: ApplicationState
    /// How long the whole fan-out took.
    public let duration: Duration
    /// Services whose hook overran its deadline.
    public let overruns: [Overrun]
    /// Services whose hook threw, with the error text.
    public let failures: [String: String]
    /// How many services were asked.
    public let serviceCount: Int
}

/// Published by the session-lock service (or anyone who locks the session); the host answers it
/// by fanning out the protected-data events.
public struct SessionLockDidChange: Sendable, Hashable {
    /// True when the session just locked.
    public let isLocked: Bool
    /// Why, for logs and notifications ("entered background", "secret unreadable").
    public let reason: String

    /// A lock (`isLocked`) or unlock, for `reason`.
    public init(isLocked: Bool, reason: String) {
        self.isLocked = isLocked
        self.reason = reason
    }
}

/// Published by the daemon when a reload was refused and the old configuration keeps running.
public struct ConfigurationReloadDidFail: Sendable, Hashable {
    /// The error, as an operator reads it.
    public let message: String

    /// A refusal saying `message`.
    public init(message: String) {
        self.message = message
    }
}

/// Published by the host after a reload was applied.
public struct ConfigurationDidReload: Sendable, Hashable {
    /// Services that were added, removed, updated live and restarted.
    public let added: [String], removed: [String], updated: [String], restarted: [String]
}

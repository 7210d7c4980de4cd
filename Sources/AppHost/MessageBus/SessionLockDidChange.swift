/// Published by the session-lock service (or anyone who locks the session); the host answers it
/// by fanning out the protected-data events.
public struct SessionLockDidChange: Sendable, Hashable {
    /// True when the session just locked.
    public let isLocked: Bool
    /// Why, for logs and notifications ("entered background", "secret unreadable").
    public let reason: String
    /// Why the machine asked, when it did (`screen-lock`: logind's screen lock); the host's
    /// request for the change carries it (`ServiceContext.hostRequestCause`).
    public let cause: String?

    /// A lock (`isLocked`) or unlock, for `reason`; `cause` when the machine asked for it.
    public init(isLocked: Bool, reason: String, cause: String? = nil) {
        self.isLocked = isLocked
        self.reason = reason
        self.cause = cause
    }
}

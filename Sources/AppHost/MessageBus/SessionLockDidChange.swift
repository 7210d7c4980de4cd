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

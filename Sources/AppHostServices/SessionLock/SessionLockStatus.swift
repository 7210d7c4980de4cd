/// Published by the session-lock service on the bus whenever its view changes: a lock was
/// scheduled or cancelled, the session locked or unlocked, or an unlock failed. The daemon and
/// other services can show it; `ApplicationHandle.isSessionLocked` remains the host's own answer.
public struct SessionLockStatus: Sendable, Hashable {
    /// The session is locked (the secret is wiped).
    public let isLocked: Bool
    /// A lock is scheduled at the end of the grace period.
    public let isLockPending: Bool
    /// Why the session cannot unlock, when the secret is unavailable; nil otherwise.
    public let problem: String?

    /// A status with these values.
    public init(isLocked: Bool, isLockPending: Bool, problem: String?) {
        self.isLocked = isLocked
        self.isLockPending = isLockPending
        self.problem = problem
    }
}

/// Published when the logind session the daemon watches locked or unlocked its screen
/// (`loginctl lock-session`, a screen saver, the session's `LockedHint`). The session-lock service
/// locks the session while the screen is locked, beside its own background rule.
public struct ScreenLockDidChange: Sendable, Hashable {
    /// Whether the screen is locked now.
    public let isLocked: Bool
    /// The logind session's id.
    public let session: String

    /// The screen of `session` locked (`isLocked`) or unlocked.
    public init(isLocked: Bool, session: String) {
        self.isLocked = isLocked
        self.session = session
    }
}

/// What the machine the host runs on prepares for: logind's `PrepareForSleep` or
/// `PrepareForShutdown`. Its raw value is the request's cause (`CAUSE=sleep`).
public enum MachineSleepKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A suspend or a hibernation.
    case sleep
    /// A poweroff or a reboot.
    case shutdown

    /// The cause's word: `sleep`, `shutdown`.
    public var description: String { rawValue }
}

/// What the host keeps so that its next run can pick up where this one was: each service's own
/// bytes, and the lifecycle it was in (foreground or background, session locked or not).
///
/// The host writes it through a `RestorableStateStorage` whenever a request changed it, and gives
/// it back at the next launch: every service gets its bytes in `LaunchOptions.restoredState`,
/// and after an unclean exit the host launches into the state it was in. No secrets: the bytes
/// reach memory other processes of the same user can read (systemd's fd store) and a file in the
/// state directory.
public struct RestorableState: Sendable, Hashable {
    /// Counts up with every copy kept, across runs: of two copies, the higher one is newer.
    public var generation: UInt64
    /// Whether the host was in the background (otherwise it was active).
    public var isInBackground: Bool
    /// Whether the session was locked.
    public var isSessionLocked: Bool
    /// Why it was locked, as `HostStatus.sessionLockReason` said.
    public var sessionLockReason: String
    /// Each service's bytes, by instance name.
    public var services: [String: [UInt8]]

    /// A state with the given values.
    public init(generation: UInt64, isInBackground: Bool = false, isSessionLocked: Bool = false, sessionLockReason: String = "", services: [String: [UInt8]] = [:]) {
        self.generation = generation
        self.isInBackground = isInBackground
        self.isSessionLocked = isSessionLocked
        self.sessionLockReason = sessionLockReason
        self.services = services
    }

    /// The largest encoded state a reader accepts (1 MiB): state for a restart, not a database.
    public static let maximumEncodedSize = 1 << 20

    /// Whether the two describe the same state, whatever their generations.
    func hasSameContent(as other: RestorableState) -> Bool {
        hasSameLifecycle(as: other) && services == other.services
    }

    /// Whether the two describe the same lifecycle, whatever the services' bytes.
    func hasSameLifecycle(as other: RestorableState) -> Bool {
        isInBackground == other.isInBackground && isSessionLocked == other.isSessionLocked
            && sessionLockReason == other.sessionLockReason
    }
}

/// What a service learns about this launch, the way an onboarding context carries its results.
public struct LaunchOptions: Sendable, Hashable, Codable {
    /// Whether this host instance ever ran before with this state directory.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// No launch state was found: a fresh installation.
        case firstLaunch
        /// An earlier run left launch state behind.
        case restore
    }

    /// How the previous run ended.
    public enum PreviousExit: String, Sendable, Hashable, Codable {
        /// There was no previous run.
        case none
        /// The previous run terminated its services and removed its running marker.
        case clean
        /// The previous run left its running marker behind: a crash, SIGKILL or power loss.
        case unclean
    }

    /// First launch or restore.
    public var kind: Kind
    /// Launches so far, this one included (1 on the first launch).
    public var launchCount: Int
    /// A stable id for this installation, made on the first launch and kept.
    public var installationID: InstallationID
    /// How the previous run ended.
    public var previousExit: PreviousExit
    /// Why the previous run ended, where it can be told (`ExitCause`); nil on a first launch
    /// and without a `LaunchStateStorage` that knows.
    public var previousExitCause: ExitCause?
    /// Why the previous run was unhealthy when it ended uncleanly (`HostStatus.healthProblem`:
    /// `outbox failed 6 times in 60s`), so a launch after systemd's watchdog can say which
    /// service it was; nil when it was healthy or ended cleanly.
    public var previousHealthProblem: String?
    /// When this launch began, as the `LaunchStateStorage` read the clock; nil without one (the
    /// core has no wall clock of its own).
    public var launchDate: UnixTime?
    /// The bytes this service last kept with `ApplicationHandle.keepRestorableState(_:)` in an
    /// earlier run, after a clean exit or not; nil when it kept none or nothing was restored.
    public var restoredState: [UInt8]?
    /// True when this service launches into the background: the host does, as the previous run
    /// was there when it ended uncleanly, or the host is there when a reload adds the service or
    /// restarts its instance. `applicationDidEnterBackground` then follows the launch hooks, not
    /// `didBecomeActive`, and no `applicationWillResignActive` comes before it: it is no new
    /// entry into the background.
    public var launchesIntoBackground: Bool

    /// Options with the given values.
    public init(
        kind: Kind,
        launchCount: Int,
        installationID: InstallationID,
        previousExit: PreviousExit,
        previousExitCause: ExitCause? = nil,
        previousHealthProblem: String? = nil,
        launchDate: UnixTime? = nil,
        restoredState: [UInt8]? = nil,
        launchesIntoBackground: Bool = false
    ) {
        self.kind = kind
        self.launchCount = launchCount
        self.installationID = installationID
        self.previousExit = previousExit
        self.previousExitCause = previousExitCause
        self.previousHealthProblem = previousHealthProblem
        self.launchDate = launchDate
        self.restoredState = restoredState
        self.launchesIntoBackground = launchesIntoBackground
    }

    /// True for a first launch.
    public var isFirstLaunch: Bool { kind == .firstLaunch }
    /// True when the previous run did not end cleanly.
    public var previousRunEndedUncleanly: Bool { previousExit == .unclean }
}

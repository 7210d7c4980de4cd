/// What the host does when a service's `run(_:)` loop ends on its own: OTP's restart types, a
/// delay that doubles, and an intensity past which restarting gives way to escalation.
///
/// Running `run(_:)` again on the same instance is a contract a service opts into: the default,
/// `temporary`, never restarts, as hosts did before supervision.
public struct RestartPolicy: Sendable, Hashable {
    /// When the run loop is started again.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Whenever it ends, returned or thrown.
        case permanent
        /// Only when it throws.
        case transient
        /// Never.
        case temporary
    }

    /// What a restart starts again.
    public enum Scope: String, Sendable, Hashable, CaseIterable {
        /// The run loop alone, on the same instance with its state.
        case runLoop = "run-loop"
        /// The whole service, the way a reload restarts one: `applicationWillTerminate` to the
        /// old instance, a new one from its factory with its restorable state, its launch hooks,
        /// and the events that bring it to the host's state.
        case instance
    }

    /// When the run loop is started again.
    public var mode: Mode
    /// What a restart starts again.
    public var scope: Scope
    /// The first restart's delay; each restart after it waits twice as long, up to
    /// `maximumDelay`, plus up to a tenth as jitter.
    public var delay: Duration
    /// The longest delay; a run that lasted longer than this starts the doubling over.
    public var maximumDelay: Duration
    /// More restarts than this within `period` escalate: a required service makes the host
    /// unhealthy, an optional one is stopped.
    public var intensity: Int
    /// The window `intensity` counts restarts in.
    public var period: Duration

    /// A policy; the defaults are those of the daemon's config.
    public init(
        mode: Mode = .temporary,
        scope: Scope = .runLoop,
        delay: Duration = .milliseconds(100),
        maximumDelay: Duration = .seconds(30),
        intensity: Int = 5,
        period: Duration = .seconds(60)
    ) {
        self.mode = mode
        self.scope = scope
        self.delay = delay
        self.maximumDelay = maximumDelay
        self.intensity = intensity
        self.period = period
    }

    /// Never restart: the run loop runs once.
    public static let temporary = RestartPolicy()

    /// Whether a run loop that ended this way is started again.
    func restarts(after ending: RunLoopEnding) -> Bool {
        switch (mode, ending) {
        case (.permanent, _), (.transient, .threw): true
        case (.temporary, _), (.transient, .returned): false
        }
    }
}

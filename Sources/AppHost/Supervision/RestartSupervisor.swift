/// One service's restart rules as a state machine: each event returns what the loop does, and
/// the loop decides nothing of its own. Times are the loop's clock, passed in, so a table test
/// drives it without waiting.
struct RestartSupervisor: Sendable {
    /// Where the service's run loop is.
    enum State: Sendable, Hashable {
        /// It runs, since then.
        case running(since: ContinuousClock.Instant)
        /// It ended and its restart is due then.
        case waiting(until: ContinuousClock.Instant)
        /// It ended and its policy does not start it again.
        case ended
        /// It failed more often than its intensity allows: no restart until the host's next run.
        case failed(reason: String)
    }

    /// What the loop does about a run loop that ended.
    enum Decision: Sendable, Hashable {
        /// Nothing: the policy does not restart it.
        case leave
        /// Arm a wake for `at`, then restart it: the `count`th restart within the period.
        case restart(at: ContinuousClock.Instant, delay: Duration, count: Int)
        /// Restarting gave way: a required service makes the host unhealthy, an optional one is
        /// stopped.
        case escalate(reason: String)
    }

    /// The service's policy; a reload may hand it a new one.
    var policy: RestartPolicy
    private(set) var state: State
    /// How the run loop last ended on its own.
    private(set) var lastEnding: RunLoopEnding?
    /// When each restart within the last period was decided.
    private(set) var recent: [ContinuousClock.Instant] = []
    /// Restarts since the delay last started over, for the doubling.
    private(set) var backoffStep = 0
    /// Every restart made in this run of the host.
    private(set) var total = 0

    init(policy: RestartPolicy, startedAt now: ContinuousClock.Instant) {
        self.policy = policy
        self.state = .running(since: now)
    }

    /// The run loop ended on its own at `now`. `jitter` (0...1) picks where in the tenth of
    /// jitter the delay falls.
    mutating func runEnded(_ ending: RunLoopEnding, at now: ContinuousClock.Instant, jitter: Double) -> Decision {
        guard case .running(let since) = state else { return .leave }
        lastEnding = ending
        guard policy.restarts(after: ending) else {
            state = .ended
            return .leave
        }
        // A run that lasted past the longest delay was a good run: the doubling starts over.
        if now - since > policy.maximumDelay { backoffStep = 0 }
        recent.removeAll { now - $0 >= policy.period }
        guard recent.count < policy.intensity else {
            let failures = recent.count + 1
            let reason = "failed \(failures == 1 ? "once" : "\(failures) times") in \(policy.period.configText)"
            state = .failed(reason: reason)
            return .escalate(reason: reason)
        }
        recent.append(now)
        var delay = policy.delay
        for _ in 0..<backoffStep where delay < policy.maximumDelay { delay *= 2 }
        delay = min(delay, policy.maximumDelay)
        delay += delay * (min(max(jitter, 0), 1) / 10)
        backoffStep += 1
        state = .waiting(until: now + delay)
        return .restart(at: now + delay, delay: delay, count: recent.count)
    }

    /// Whether a restart is due at `now`.
    func isDue(at now: ContinuousClock.Instant) -> Bool {
        if case .waiting(let until) = state { return until <= now }
        return false
    }

    /// When the waiting restart is due, if one waits.
    var dueAt: ContinuousClock.Instant? {
        if case .waiting(let until) = state { return until }
        return nil
    }

    /// The loop started the run loop again at `now`.
    mutating func restarted(at now: ContinuousClock.Instant) {
        total += 1
        state = .running(since: now)
    }

    /// An operator restarts the service: its failures so far no longer count.
    mutating func forgetFailures() {
        recent = []
        backoffStep = 0
        lastEnding = nil
    }

    /// The restart in waiting, as the status shows it (`2/5 in 60s`).
    var pending: RestartAttempt? {
        guard case .waiting = state else { return nil }
        return RestartAttempt(count: recent.count, intensity: policy.intensity, period: policy.period)
    }
}

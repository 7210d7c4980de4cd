/// One service's restart rules as a state machine: each event returns what the loop does; when
/// a step may run is the lifecycle state machine's (`LifecycleRequest.supervise`). Times are the loop's clock, passed in, so a table test
/// drives it without waiting.
package struct RestartSupervisor: Sendable {
    /// Where the service's run loop is.
    enum State: Sendable, Hashable {
        /// It runs, since then.
        case running(since: ContinuousClock.Instant)
        /// It ended and its restart is due then.
        case waiting(until: ContinuousClock.Instant)
        /// It ended and its policy does not start it again.
        case ended
        /// An optional service that failed more often than its intensity allows, to be stopped.
        case stopping(reason: String)
        /// It failed more often than its intensity allows: no restart until the host's next run
        /// (or an operator's restart).
        case failed(reason: String)
    }

    /// What the loop does next for the service, between requests.
    package enum Step: Sendable, Hashable {
        /// Start it again: its run loop, or the whole service.
        case restart(RestartPolicy.Scope)
        /// `applicationWillTerminate`, then disabled (an optional service's escalation).
        case stop(reason: String)
    }

    /// What the loop does about a run loop that ended.
    enum Decision: Sendable, Hashable {
        /// Nothing: the policy does not restart it.
        case leave
        /// Arm a wake for `at`, then restart it: the `count`th restart within the period.
        case restart(at: ContinuousClock.Instant, delay: Duration, count: Int)
        /// Restarting gave way: a required service makes the host unhealthy (`stops` false), an
        /// optional one is stopped (`dueStep` says when).
        case escalate(reason: String, stops: Bool)
    }

    /// The service's policy; a reload may hand it a new one.
    var policy: RestartPolicy
    /// Whether escalation makes the host unhealthy (required) or stops the service (optional).
    let isRequired: Bool
    private(set) var state: State
    /// How the run loop last ended on its own.
    private(set) var lastEnding: RunLoopEnding?
    /// When each restart within the last period was decided.
    private(set) var recent: [ContinuousClock.Instant] = []
    /// Restarts since the delay last started over, for the doubling.
    private(set) var backoffStep = 0
    /// Every restart made in this run of the host.
    private(set) var total = 0

    init(policy: RestartPolicy, isRequired: Bool, startedAt now: ContinuousClock.Instant) {
        self.policy = policy
        self.isRequired = isRequired
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
            state = isRequired ? .failed(reason: reason) : .stopping(reason: reason)
            return .escalate(reason: reason, stops: !isRequired)
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

    /// The step due at `now`, if any.
    func dueStep(at now: ContinuousClock.Instant) -> Step? {
        switch state {
        case .waiting(let until) where until <= now: .restart(policy.scope)
        case .stopping(let reason): .stop(reason: reason)
        default: nil
        }
    }

    /// The service is being terminated, retired or disabled (a stop, a reload, a rollback, a
    /// restart that failed to launch): nothing is due for it any more, and an end of its run
    /// loop from now on is not one of its own. A stop it waited for makes it failed.
    mutating func retire() {
        switch state {
        case .stopping(let reason): state = .failed(reason: reason)
        case .failed: break
        default: state = .ended
        }
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

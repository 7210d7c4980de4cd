@testable import AppHost
import Testing

/// The restart rules as a table: every decision from the clock passed in, without waiting.
@Suite struct RestartSupervisorTests {
    static let start = ContinuousClock.now
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    static let transient = RestartPolicy(mode: .transient, delay: .milliseconds(100), maximumDelay: .milliseconds(1000), intensity: 5, period: .seconds(60))

    @Test("which endings each mode restarts", arguments: [
        (RestartPolicy.Mode.permanent, RunLoopEnding.returned, true),
        (.permanent, .threw("boom"), true),
        (.transient, .returned, false),
        (.transient, .threw("boom"), true),
        (.temporary, .returned, false),
        (.temporary, .threw("boom"), false),
    ])
    func modes(mode: RestartPolicy.Mode, ending: RunLoopEnding, restarts: Bool) {
        var supervisor = RestartSupervisor(policy: RestartPolicy(mode: mode), isRequired: true, startedAt: Self.start)
        let decision = supervisor.runEnded(ending, at: Self.at(10), jitter: 0)
        if restarts {
            #expect(decision == .restart(at: Self.at(110), delay: .milliseconds(100), count: 1))
            #expect(supervisor.state == .waiting(until: Self.at(110)))
        } else {
            #expect(decision == .leave)
            #expect(supervisor.state == .ended)
        }
    }

    @Test("the delay doubles from restart-delay up to restart-delay-max")
    func delaysDouble() {
        var supervisor = RestartSupervisor(policy: Self.transient, isRequired: true, startedAt: Self.start)
        var now = 0
        var delays: [Duration] = []
        // Each run fails 10 ms after its restart: a short run, so the doubling goes on.
        for _ in 0..<5 {
            now += 10
            guard case .restart(let at, let delay, _) = supervisor.runEnded(.threw("boom"), at: Self.at(now), jitter: 0) else {
                Issue.record("no restart")
                return
            }
            delays.append(delay)
            now += Int(delay.microseconds / 1000)
            #expect(at == Self.at(now))
            #expect(supervisor.dueStep(at: Self.at(now)) == .restart(.runLoop))
            #expect(supervisor.dueStep(at: Self.at(now - 1)) == nil)
            supervisor.restarted(at: Self.at(now))
        }
        #expect(delays == [100, 200, 400, 800, 1000].map { .milliseconds($0) })
        #expect(supervisor.total == 5)
    }

    @Test("jitter adds at most a tenth of the delay")
    func jitter() {
        var supervisor = RestartSupervisor(policy: Self.transient, isRequired: true, startedAt: Self.start)
        #expect(supervisor.runEnded(.threw("boom"), at: Self.at(0), jitter: 1) == .restart(at: Self.at(110), delay: .milliseconds(110), count: 1))
        var other = RestartSupervisor(policy: Self.transient, isRequired: true, startedAt: Self.start)
        #expect(other.runEnded(.threw("boom"), at: Self.at(0), jitter: 0.5) == .restart(at: Self.at(105), delay: .milliseconds(105), count: 1))
    }

    @Test("a run that lasted past the longest delay starts the doubling over")
    func aLongRunResetsTheDelay() {
        var supervisor = RestartSupervisor(policy: Self.transient, isRequired: true, startedAt: Self.start)
        _ = supervisor.runEnded(.threw("boom"), at: Self.at(10), jitter: 0)
        supervisor.restarted(at: Self.at(110))
        _ = supervisor.runEnded(.threw("boom"), at: Self.at(120), jitter: 0)
        supervisor.restarted(at: Self.at(320))
        // Ran 1001 ms, past restart-delay-max (1s): back to 100 ms.
        #expect(supervisor.runEnded(.threw("boom"), at: Self.at(1321), jitter: 0) == .restart(at: Self.at(1421), delay: .milliseconds(100), count: 3))
    }

    @Test("more restarts than the intensity within the period escalate, naming the count and the window")
    func intensity() {
        let policy = RestartPolicy(mode: .permanent, delay: .milliseconds(1), maximumDelay: .milliseconds(1), intensity: 2, period: .seconds(10))
        var supervisor = RestartSupervisor(policy: policy, isRequired: true, startedAt: Self.start)
        #expect(supervisor.runEnded(.returned, at: Self.at(0), jitter: 0) == .restart(at: Self.at(1), delay: .milliseconds(1), count: 1))
        supervisor.restarted(at: Self.at(1))
        #expect(supervisor.pending == nil)
        #expect(supervisor.runEnded(.returned, at: Self.at(2), jitter: 0) == .restart(at: Self.at(3), delay: .milliseconds(1), count: 2))
        #expect(supervisor.pending == RestartAttempt(count: 2, intensity: 2, period: .seconds(10)))
        #expect(supervisor.pending?.description == "2/2 in 10s")
        supervisor.restarted(at: Self.at(3))
        #expect(supervisor.runEnded(.returned, at: Self.at(4), jitter: 0) == .escalate(reason: "failed 3 times in 10s", stops: false))
        #expect(supervisor.state == .failed(reason: "failed 3 times in 10s"))
        // Failed for this run of the host: a later end (it cannot come, but) changes nothing.
        #expect(supervisor.runEnded(.returned, at: Self.at(5), jitter: 0) == .leave)
    }

    @Test("restarts older than the period no longer count")
    func theWindowSlides() {
        let policy = RestartPolicy(mode: .permanent, delay: .milliseconds(1), maximumDelay: .milliseconds(1), intensity: 1, period: .seconds(1))
        var supervisor = RestartSupervisor(policy: policy, isRequired: true, startedAt: Self.start)
        #expect(supervisor.runEnded(.returned, at: Self.at(0), jitter: 0) == .restart(at: Self.at(1), delay: .milliseconds(1), count: 1))
        supervisor.restarted(at: Self.at(1))
        #expect(supervisor.runEnded(.returned, at: Self.at(1000), jitter: 0) == .restart(at: Self.at(1001), delay: .milliseconds(1), count: 1))
    }

    @Test("intensity 0 escalates the first failure")
    func intensityZero() {
        var supervisor = RestartSupervisor(policy: RestartPolicy(mode: .transient, intensity: 0), isRequired: true, startedAt: Self.start)
        #expect(supervisor.runEnded(.threw("boom"), at: Self.at(0), jitter: 0) == .escalate(reason: "failed once in 60s", stops: false))
    }

    @Test("an optional service's escalation is a stop, due at once, then failed; a required one's is failed at once")
    func optionalStops() {
        let policy = RestartPolicy(mode: .transient, intensity: 0)
        var optional = RestartSupervisor(policy: policy, isRequired: false, startedAt: Self.start)
        #expect(optional.runEnded(.threw("boom"), at: Self.at(0), jitter: 0) == .escalate(reason: "failed once in 60s", stops: true))
        #expect(optional.dueStep(at: Self.at(0)) == .stop(reason: "failed once in 60s"))
        optional.retire()
        #expect(optional.state == .failed(reason: "failed once in 60s"))
        #expect(optional.dueStep(at: Self.at(0)) == nil)
        var required = RestartSupervisor(policy: policy, isRequired: true, startedAt: Self.start)
        _ = required.runEnded(.threw("boom"), at: Self.at(0), jitter: 0)
        #expect(required.dueStep(at: Self.at(0)) == nil, "the watchdog, not the host, acts on it")
    }

    @Test("an instance-scoped restart is due as one")
    func instanceScope() {
        var supervisor = RestartSupervisor(policy: RestartPolicy(mode: .permanent, scope: .instance), isRequired: true, startedAt: Self.start)
        _ = supervisor.runEnded(.returned, at: Self.at(0), jitter: 0)
        #expect(supervisor.dueStep(at: Self.at(100)) == .restart(.instance))
    }
}

import ServiceContextModule
import Synchronization

/// A list of hook calls made one after the other, inline, by one child task of the host — the
/// fast path: a fan-out to a hundred quick services costs one task, not a hundred hops.
///
/// The run tells the host's loop which call it is in and since when, so the loop can see a
/// deadline pass. Then the loop hands the run over: the stuck call's service waits for its late
/// answer, and the loop starts a new run for the calls after it. A handed-over run stops after
/// the stuck call and reports its late answer instead.
final class HookRun: Sendable {
    private struct Progress {
        var position = 0
        var startedAt: ContinuousClock.Instant?
        var handedOverAt: Int?
        var results: [HookResult]
    }

    let token: Int
    let calls: [HookCall]
    /// The context of the request whose fan-out made the run: a late answer is logged with
    /// its id.
    let context: ServiceContext?
    /// Makes no call after one that did not return `true` (a launch's `willFinishLaunching`
    /// and `didFinishLaunching`: the second only when the first let the launch go on).
    let stopsAtFailure: Bool
    /// For each position, the shortest deadline from there on: the loop never needs to wake
    /// before `startedAt + remainingMinimum[position]`.
    let remainingMinimum: [Duration]
    private let progress: Mutex<Progress>

    init(token: Int, calls: [HookCall], stopsAtFailure: Bool = false) {
        self.token = token
        self.calls = calls
        self.context = ServiceContext.current
        self.stopsAtFailure = stopsAtFailure
        var minimum = Duration.seconds(Int64.max / 4)
        var remaining = [Duration](repeating: .zero, count: calls.count)
        for index in calls.indices.reversed() {
            minimum = min(minimum, calls[index].deadline)
            remaining[index] = minimum
        }
        self.remainingMinimum = remaining
        self.progress = Mutex(Progress(results: Array(repeating: .skipped, count: calls.count)))
    }

    /// The run's body, in a child task of the host.
    func perform(answers: AsyncStream<HostInput>.Continuation) async {
        var startedAt = ContinuousClock.now
        let began = progress.withLock { progress -> Bool in
            guard progress.handedOverAt == nil, !calls.isEmpty else { return false }
            progress.startedAt = startedAt
            return true
        }
        guard began || calls.isEmpty else { return }
        for index in calls.indices {
            // A queued call runs with its own request's id; the others inherit the run's.
            let result = if let queued = calls[index].queuedContext {
                await ServiceContext.withValue(queued) { await calls[index].perform() }
            } else {
                await calls[index].perform()
            }
            let endedAt = ContinuousClock.now
            calls[index].application.context.metrics.recordHook(calls[index].hook.name, duration: endedAt - startedAt)
            // Records the answer and starts the next call in one step: a call ends when the
            // next one starts (one clock read and one lock per call).
            let recorded = progress.withLock { progress -> (result: HookResult, goesOn: Bool)? in
                guard progress.handedOverAt == nil else { return nil }
                // A call that answered after its deadline overran, even when the loop's timer
                // had no thread to wake on before the answer came (a starved pool).
                let overran = endedAt - startedAt > calls[index].deadline
                let recorded = overran ? .overran(calls[index].deadline) : result
                progress.results[index] = recorded
                let goesOn = index + 1 < calls.count && !(stopsAtFailure && recorded != .returned(true))
                progress.position = goesOn ? index + 1 : calls.count
                progress.startedAt = goesOn ? endedAt : nil
                return (recorded, goesOn)
            }
            guard let recorded else {
                answers.yield(.lateAnswer(serviceID: calls[index].serviceID, hook: calls[index].hook.name, result, context: calls[index].queuedContext ?? context))
                return
            }
            if !recorded.goesOn { break }
            startedAt = endedAt
        }
        answers.yield(.runFinished(token: token))
    }

    /// When the loop should look again: the current call's start (or now, before the first)
    /// plus the shortest deadline still ahead.
    func nextLook(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        progress.withLock { progress in
            guard progress.handedOverAt == nil, progress.position < calls.count else { return nil }
            return (progress.startedAt ?? now) + remainingMinimum[progress.position]
        }
    }

    /// Hands the run over when its current call is past its deadline: returns that call's
    /// position and when it started, after which the run makes no further call.
    func handOverIfOverdue(now: ContinuousClock.Instant) -> (position: Int, startedAt: ContinuousClock.Instant)? {
        progress.withLock { progress in
            guard progress.handedOverAt == nil, let startedAt = progress.startedAt,
                startedAt + calls[progress.position].deadline <= now
            else { return nil }
            progress.handedOverAt = progress.position
            return (progress.position, startedAt)
        }
    }

    /// Hands the run over at once (terminate during launch): returns the position of the first
    /// call without a result, if any, and whether it had started. A call counts as started once
    /// the one before it answered, since the run's task goes on to it at once; only the first
    /// call of a run whose task had not begun is never made.
    func abandon() -> (position: Int, started: Bool)? {
        progress.withLock { progress in
            guard progress.handedOverAt == nil, progress.position < calls.count else { return nil }
            progress.handedOverAt = progress.position
            return (progress.position, progress.startedAt != nil)
        }
    }

    /// The service whose hook the run is inside, which hook, and since when; nil before the
    /// run began, after it ended, or once it was handed over (the service is then busy).
    func callInProgress() -> (service: String, hook: String, since: ContinuousClock.Instant)? {
        progress.withLock { progress in
            guard progress.handedOverAt == nil, progress.position < calls.count, let startedAt = progress.startedAt else { return nil }
            let call = calls[progress.position]
            return (call.application.context.serviceName, call.hook.name, startedAt)
        }
    }

    /// The results so far, one per call.
    var results: [HookResult] { progress.withLock { $0.results } }
}

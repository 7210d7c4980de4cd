import Logging
import ServiceContextModule

/// The hook scheduler: runs of hook calls started as child tasks under their tokens, the calls
/// queued behind a service's late hook and run once it returns, and the deadline timer's wakes.
/// The loop waits for the runs' answers and wakes (they arrive on its one input stream) and
/// hands them here.
struct HookScheduler {
    private let timer: AsyncStream<ContinuousClock.Instant>.Continuation
    private let outlet: HostOutlet
    private var nextToken = 0
    /// Runs of calls queued behind a late hook, by token: whose they are.
    private var backlogRuns: [Int: (serviceID: Int, run: HookRun)] = [:]
    /// The wakes armed that have not fired.
    private var wakes: [ContinuousClock.Instant] = []

    init(timer: AsyncStream<ContinuousClock.Instant>.Continuation, outlet: HostOutlet) {
        self.timer = timer
        self.outlet = outlet
    }

    /// Starts `calls` as one run in a child task, published as the run in progress.
    mutating func start(_ calls: [HookCall], stopsAtFailure: Bool, group: inout DiscardingTaskGroup) -> HookRun {
        nextToken += 1
        let run = HookRun(token: nextToken, calls: calls, stopsAtFailure: stopsAtFailure)
        outlet.publish(run: run)
        let answers = outlet.input
        group.addTask { await run.perform(answers: answers) }
        return run
    }

    /// A request's runs are over: none is published, so no instance of an earlier
    /// configuration stays referenced.
    func runsEnded() {
        outlet.publish(run: nil)
    }

    /// Wakes the loop at `instant` unless an earlier wake is pending.
    mutating func arm(at instant: ContinuousClock.Instant) {
        guard wakes.allSatisfy({ $0 > instant }) else { return }
        wakes.append(instant)
        timer.yield(instant)
    }

    /// The wake armed for `instant` fired.
    mutating func fired(_ instant: ContinuousClock.Instant) {
        wakes.removeAll { $0 == instant }
    }

    /// Whether the run of `token` is one of the calls queued behind a late hook.
    func isBacklog(_ token: Int) -> Bool {
        backlogRuns[token] != nil
    }

    /// A run of queued calls ended: what each did is logged with its own request's id; returns
    /// whose they were, nil when it was no such run.
    mutating func backlogFinished(_ token: Int, logger: Logger) -> Int? {
        guard let (serviceID, run) = backlogRuns.removeValue(forKey: token) else { return nil }
        for (call, result) in zip(run.calls, run.results) {
            ServiceContext.withValue(call.queuedContext) { Self.logLate(call.application.serviceName, call.hook.name, result, logger: logger) }
        }
        return serviceID
    }

    /// Starts the calls queued behind `slot`'s late hook, or frees it when there are none.
    mutating func runBacklog(of slot: inout ServiceSlot, group: inout DiscardingTaskGroup) {
        guard !slot.backlog.isEmpty else {
            slot.isBusy = false
            slot.busySince = nil
            return
        }
        slot.busySince = (.now, slot.backlog[0].hook.name)
        nextToken += 1
        let run = HookRun(token: nextToken, calls: slot.backlog)
        slot.backlog = []
        backlogRuns[run.token] = (slot.id, run)
        let answers = outlet.input
        group.addTask { await run.perform(answers: answers) }
    }

    /// A late hook's end: a throw is an error, a return is news.
    static func logLate(_ service: String, _ hook: String, _ result: HookResult, logger: Logger) {
        if case .threw(let error) = result {
            logger.error("\(service) threw in \(hook) (it ran late): \(error)", metadata: ["service": "\(service)"])
        } else {
            logger.info("\(service) finished \(hook) late", metadata: ["service": "\(service)"])
        }
    }

    /// The calls of one hook to each enabled service of `indices`: those free to take it, with
    /// their positions, and those of the services still busy in a late hook, to queue. Reads the
    /// slots in place: `slots[index]` copies all of a slot, and this runs per service per event.
    static func calls(
        _ hook: HookCall.Hook, to indices: [Int], of slots: [ServiceSlot], state: ApplicationState, isSessionLocked: Bool
    ) -> (calls: [HookCall], positions: [Int], deferred: [(position: Int, call: HookCall)]) {
        var calls: [HookCall] = []
        var positions: [Int] = []
        var deferred: [(position: Int, call: HookCall)] = []
        calls.reserveCapacity(indices.count)
        positions.reserveCapacity(indices.count)
        slots.withUnsafeBufferPointer { slots in
            for (position, index) in indices.enumerated() where slots[index].health.isEnabled {
                let call = HookCall(
                    serviceID: slots[index].id, service: slots[index].service, hook: hook,
                    application: ApplicationHandle(context: slots[index].context, state: state, isSessionLocked: isSessionLocked, serviceCount: slots.count),
                    deadline: slots[index].hookDeadline)
                if slots[index].isBusy {
                    deferred.append((position, call))
                } else {
                    calls.append(call)
                    positions.append(position)
                }
            }
        }
        return (calls, positions, deferred)
    }
}

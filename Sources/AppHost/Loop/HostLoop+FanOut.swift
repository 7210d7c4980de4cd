import Logging
import ServiceContextModule

/// Fan-out: a lifecycle event to every service under its deadline, the runs of hook calls, and
/// what late hooks leave behind.
extension HostLoop {
    /// Delivers `event` to every enabled service (registration order going up, reverse going
    /// down), one after the other, each under its deadline, and publishes its record.
    @discardableResult
    mutating func fanOut(_ event: LifecycleEvent, from: ApplicationState, to: ApplicationState, only indices: [Int]? = nil, group: inout DiscardingTaskGroup) async -> [HookResult] {
        let start = ContinuousClock.now
        let targets = indices ?? (event.direction == .up ? Array(services.indices) : Array(services.indices.reversed()))
        let results = await call(targets, .event(event), group: &group)
        var tally = HookTally()
        for (index, result) in zip(targets, results) {
            record(result, of: event, at: index, in: &tally)
        }
        bus.publish(tally.record(of: event, from: from, to: to, since: start, serviceCount: targets.count))
        return results
    }

    /// One hook of one service, under `deadline`. A service still busy in an overrunning hook
    /// gets the call queued behind it and is not waited for, unless `waitIfBusy` (its last call).
    /// With `abandonOnTerminate`, a terminate stops the wait.
    mutating func call(
        _ index: Int,
        _ hook: HookCall.Hook,
        deadline: Duration,
        configuration override: ServiceSection? = nil,
        waitIfBusy: Bool = false,
        abandonOnTerminate: Bool = false,
        group: inout DiscardingTaskGroup
    ) async -> HookResult {
        guard services[index].health.isEnabled else { return .skipped }
        let call = makeCall(index, hook, deadline: deadline, configuration: override)
        if services[index].isBusy {
            services[index].backlog.append(call.queued())
            guard waitIfBusy else { return .deferred }
            logger.debug("\(services[index].name) is still in an earlier hook; waiting for its \(hook.name)", metadata: ["service": "\(services[index].name)"])
            return await waitUntilFree(index, until: .now + deadline, deadline: deadline, group: &group)
        }
        return await execute([call], services: [index], abandonOnTerminate: abandonOnTerminate, group: &group)[0]
    }

    /// One hook of each of `indices`, in that order; services busy in an overrunning hook get
    /// theirs queued (`.deferred`).
    mutating func call(_ indices: [Int], _ hook: HookCall.Hook, group: inout DiscardingTaskGroup) async -> [HookResult] {
        var results = [HookResult](repeating: .skipped, count: indices.count)
        let (calls, positions, deferred) = HookScheduler.calls(hook, to: indices, of: services, state: machine.state, isSessionLocked: !machine.isProtectedDataAvailable)
        for (position, call) in deferred {
            services[indices[position]].backlog.append(call.queued())
            results[position] = .deferred
        }
        let made = await execute(calls, services: positions.map { indices[$0] }, abandonOnTerminate: false, group: &group)
        for (position, result) in zip(positions, made) { results[position] = result }
        return results
    }

    func makeCall(_ index: Int, _ hook: HookCall.Hook, deadline: Duration, configuration override: ServiceSection? = nil) -> HookCall {
        HookCall(serviceID: services[index].id, service: services[index].service, hook: hook, application: application(for: index, configuration: override), deadline: deadline)
    }

    /// The handle a hook of `services[index]` gets now.
    func application(for index: Int, configuration override: ServiceSection? = nil) -> ApplicationHandle {
        ApplicationHandle(
            context: override.map { services[index].context.with(configuration: $0) } ?? services[index].context,
            state: machine.state,
            isSessionLocked: !machine.isProtectedDataAvailable,
            serviceCount: services.count
        )
    }

    /// Makes `calls` (of `owners`, by index) in order in a child task and waits for each until
    /// its deadline; a call that overruns leaves its service busy and a new run goes on with
    /// the calls after it. With `stopsAtFailure`, no call follows one that did not return
    /// `true` or overran (those not made stay `.skipped`).
    mutating func execute(_ calls: [HookCall], services owners: [Int], abandonOnTerminate: Bool, stopsAtFailure: Bool = false, group: inout DiscardingTaskGroup) async -> [HookResult] {
        var batch = HookBatch(calls: calls, owners: owners, stopsAtFailure: stopsAtFailure)
        while !batch.isDone {
            let run = hooks.start(batch.remaining, stopsAtFailure: stopsAtFailure, group: &group)
            waiting: while true {
                if isCancelled || (abandonOnTerminate && machine.isTerminatePending) {
                    batch.abandon(run, slots: &services)
                    return batch.results
                }
                if let look = run.nextLook(now: .now) { armTimer(at: look) }
                guard let input = await nextInput() else { continue }
                switch take(input, group: &group) {
                case .runFinished(let token) where token == run.token:
                    batch.finished(run)
                    break waiting
                case .deadlinePassed:
                    // The slots are touched only for an overdue call: their health list stays.
                    guard let overdue = run.handOverIfOverdue(now: .now) else { continue }
                    batch.handOver(run, at: overdue, slots: &services)
                    isHealthCheckDue = true
                    break waiting
                case .runFinished, .nothing:
                    continue
                }
            }
        }
        hooks.runsEnded()
        return batch.results
    }

    /// Waits until a busy service made every call queued behind its late hook (the last of them
    /// its `willTerminate`), or `instant` passes.
    mutating func waitUntilFree(_ index: Int, until instant: ContinuousClock.Instant, deadline: Duration, group: inout DiscardingTaskGroup) async -> HookResult {
        while services[index].isBusy {
            if isCancelled { return .abandoned }
            armTimer(at: instant)
            guard let input = await nextInput() else { continue }
            if case .deadlinePassed = take(input, group: &group), ContinuousClock.now >= instant, services[index].isBusy {
                return .overran(deadline)
            }
        }
        return .returned(true)
    }

    /// A late hook returned: logged with the id of the request that called it (`context`);
    /// the scheduler runs what queued behind it, or frees its service.
    mutating func lateAnswer(_ serviceID: Int, _ hook: String, _ result: HookResult, context: ServiceContext?, group: inout DiscardingTaskGroup) {
        guard let index = services.firstIndex(where: { $0.id == serviceID }) else { return }
        ServiceContext.withValue(context) { HookScheduler.logLate(services[index].name, hook, result, logger: logger) }
        runBacklog(index, group: &group)
    }

    /// A run of calls queued behind a late hook ended: its service runs what queued meanwhile,
    /// or is free again.
    mutating func backlogFinished(_ token: Int, group: inout DiscardingTaskGroup) {
        guard let serviceID = hooks.backlogFinished(token, logger: logger), let index = services.firstIndex(where: { $0.id == serviceID }) else { return }
        runBacklog(index, group: &group)
    }

    private mutating func runBacklog(_ index: Int, group: inout DiscardingTaskGroup) {
        isHealthCheckDue = true
        var scheduler = hooks
        scheduler.runBacklog(of: &services[index], group: &group)
        hooks = scheduler
    }

    /// Logs and records what went wrong in one hook.
    mutating func record(_ result: HookResult, of event: LifecycleEvent, at index: Int, in tally: inout HookTally) {
        // Most hooks return: their slot is not touched (its health list stays as listed).
        switch result {
        case .returned, .skipped, .abandoned: return
        default: break
        }
        let logger = self.logger
        if let overrun = services[index].record(result, of: event, in: &tally, logger: logger) { lastOverrun = overrun }
    }
}

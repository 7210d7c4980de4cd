import Logging
import ServiceContextModule

/// Taking input: requests in (terminate at once, the rest queued), every other input booked in
/// one place, and the loop's waits.
extension HostLoop {
    /// Takes a request off the stream: terminate at once, the others into the queue.
    mutating func accept(_ request: HostRequest, context: ServiceContext) {
        switch request {
        case .terminate(let reason, let reply):
            if let reply { terminateReplies.append(reply) }
            guard case .perform(let actions) = machine.decide(.terminate), !actions.isEmpty else { return }
            terminateContext = context
            terminateReason = reason
            for action in actions { apply(action) }
        case .launched(let reply):
            if let launchOutcome { reply.resume(returning: launchOutcome) } else { launchWaiters.append(reply) }
        case .terminated(let reply):
            terminateReplies.append(reply)
        default:
            // Once a terminate is pending the machine refuses every request: answered at once.
            if machine.isTerminatePending {
                drop(request)
            } else {
                queue.append(request, context: context)
            }
        }
    }

    /// Answers a request the host will not carry out, with the machine's refusal.
    func drop(_ request: HostRequest) {
        if machine.isTerminatePending { logger.notice("\(request.name) dropped: terminate comes first") }
        request.refuse(by: machine, launch: launchOutcome)
    }

    /// Books `input`: requests are accepted (terminate at once), late answers free their
    /// service, lock changes wait for the end of the request, wakes are crossed off.
    mutating func take(_ input: HostInput, group: inout DiscardingTaskGroup) -> HostInputEffect {
        switch input {
        case .request(let request, let context):
            accept(request, context: context)
        case .runFinished(let token):
            guard hooks.isBacklog(token) else { return .runFinished(token: token) }
            backlogFinished(token, group: &group)
        case .lateAnswer(let serviceID, let hook, let result, let context):
            lateAnswer(serviceID, hook, result, context: context, group: &group)
        case .sessionLockChanged(let change):
            sessionLockChanges.append(change)
        case .restorableStateStaged:
            // Bytes kept while the loop was idle: the run loop keeps them as a request of its own.
            restorable.hasStaged = true
        case .healthReported:
            for index in services.indices {
                let report = services[index].reportedHealth.current
                if services[index].healthReport != report { services[index].healthReport = report }
            }
            isHealthCheckDue = true
        case .runLoopEnded(let serviceID, let runLoopID, let ending):
            runLoopEnded(serviceID: serviceID, runLoopID: runLoopID, ending)
        case .deadline(let wake):
            hooks.fired(wake)
            isHealthCheckDue = true
            return .deadlinePassed
        }
        return .nothing
    }

    /// The next input; nil once the stream ended, which only cancellation of the host's task
    /// does (then `isCancelled` is set).
    mutating func nextInput() async -> HostInput? {
        guard let input = await inputs.next() else {
            isCancelled = true
            return nil
        }
        return input
    }

    /// The next input while no request is in progress. Only while the loop waits here do
    /// services' restorable bytes nudge it (`HostOutlet.stageRestorableState`):
    /// during a request they wait for its end, without waking the loop for nothing.
    mutating func nextIdleInput() async -> HostInput? {
        outlet.isLoopIdle.store(true, ordering: .sequentiallyConsistent)
        defer { outlet.isLoopIdle.store(false, ordering: .sequentiallyConsistent) }
        // Staged before the loop came here: no nudge was sent for them.
        if outlet.hasStagedRestorableState.load(ordering: .sequentiallyConsistent) { return .restorableStateStaged }
        return await nextInput()
    }

    /// Wakes the loop at `instant` unless an earlier wake is pending.
    mutating func armTimer(at instant: ContinuousClock.Instant) {
        hooks.arm(at: instant)
    }
}

import Logging
import ServiceContextModule

/// Supervision: a run loop that ends on its own is restarted, stopped or escalated as its
/// service's `RestartSupervisor` decides. The end is booked where it arrives; what waits for
/// hooks (an instance restart, stopping a service) is done between requests, never inside one.
extension HostLoop {
    /// Books the end of a run loop the host did not stop.
    mutating func runLoopEnded(serviceID: Int, runLoopID: Int, _ ending: RunLoopEnding) {
        guard let index = services.firstIndex(where: { $0.id == serviceID }),
            services[index].runLoopID == runLoopID, services[index].runLoopStop != nil
        else { return }
        services[index].runLoopStop = nil
        isHealthCheckDue = true
        // Nothing restarts once a terminate is pending: the machine refuses the step.
        var refusal: String?
        if case .refuse(let refused) = machine.decide(.supervise(.restart(services[index].descriptor.restart.scope))) { refusal = refused.reason }
        var book = supervision
        let wake = book.book(ending, of: &services[index], refusedBecause: refusal, at: .now)
        supervision = book
        if let wake { armTimer(at: wake) }
    }

    /// The first service whose supervisor has a step due now, and that step.
    mutating func dueSupervision(at now: ContinuousClock.Instant) -> (index: Int, step: RestartSupervisor.Step)? {
        let (step, wake) = supervision.dueStep(in: services, at: now)
        if let wake { armTimer(at: wake) }
        return step
    }

    /// Carries out `step` of `services[index]`'s supervisor as a request of its own.
    mutating func supervise(_ index: Int, _ step: RestartSupervisor.Step, group: inout DiscardingTaskGroup) async {
        switch machine.decide(.supervise(step)) {
        case .perform(let actions):
            await SupervisionBook.carryOut(actions, of: index, loop: &self, group: &group)
        case .refuse(let refusal):
            // Not taken now, so never: the step is not due again.
            services[index].supervisor?.retire()
            services[index].logger.notice("\(services[index].name): \(refusal)", metadata: ["service": "\(services[index].name)"])
        }
        await finishRequest(group: &group)
    }

    /// An operator's restart of the service named `name`: an instance restart, its failures
    /// forgotten.
    mutating func restartOnRequest(_ name: String, group: inout DiscardingTaskGroup) async -> Result<Void, ServiceRestartError> {
        let index = services.firstIndex { $0.name == name }
        let request = LifecycleRequest.restartService(name, isKnown: index != nil)
        // An unknown name is the machine's refusal too.
        guard let index, case .perform(let actions) = machine.decide(request) else {
            return .failure(SupervisionBook.restartError(name, machine.refusal(of: request), services: services))
        }
        logger.notice("\(name): restart requested", metadata: ["service": "\(name)"])
        let id = await SupervisionBook.carryOut(actions, of: index, loop: &self, group: &group)
        // A terminate that arrived during the restart cut it short: the machine says so now.
        if case .refuse(let refusal) = machine.decide(request) { return .failure(SupervisionBook.restartError(name, refusal, services: services)) }
        guard let new = services.firstIndex(where: { $0.id == id }), case .disabled(let reason) = services[new].health.condition else {
            return .success(())
        }
        return .failure(ServiceRestartError(.failedToLaunch, service: name, reason: reason))
    }

    /// The restart's log line, counter and bus message, once the run loop was started again.
    mutating func announceRestart(of serviceID: Int, scope: RestartPolicy.Scope, after ending: RunLoopEnding? = nil) {
        guard let index = services.firstIndex(where: { $0.id == serviceID }) else { return }
        SupervisionBook.announceRestart(of: &services[index], scope: scope, after: ending, on: bus)
    }
}

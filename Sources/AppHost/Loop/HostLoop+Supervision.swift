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
        if case .failure(let refusal) = await carryOut(.supervise(step), of: index, group: &group) {
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
        if index != nil, case .perform = machine.decide(request) {
            logger.notice("\(name): restart requested", metadata: ["service": "\(name)"])
        }
        switch await carryOut(request, of: index, group: &group) {
        case .failure(let refusal):
            return .failure(restartError(name, refusal))
        case .success(let id):
            // A terminate that arrived during the restart cut it short: the machine says so now.
            if case .refuse(let refusal) = machine.decide(request) { return .failure(restartError(name, refusal)) }
            guard let new = services.firstIndex(where: { $0.id == id }), case .disabled(let reason) = services[new].health.condition else {
                return .success(())
            }
            return .failure(ServiceRestartError(.failedToLaunch, service: name, reason: reason))
        }
    }

    /// The operator's error for the machine's refusal of a restart.
    func restartError(_ name: String, _ refusal: LifecycleRefusal) -> ServiceRestartError {
        if case .restartService(_, isKnown: false) = refusal.request, !refusal.isTerminatePending {
            return ServiceRestartError(.noSuchService, service: name, reason: "the services are \(services.map(\.name).joined(separator: ", "))")
        }
        return ServiceRestartError(.notRunning, service: name, reason: refusal.reason)
    }

    /// Asks the machine about a supervision request for `services[index]` and performs its
    /// steps on that service; returns the id of the service in its place.
    mutating func carryOut(_ request: LifecycleRequest, of index: Int?, group: inout DiscardingTaskGroup) async -> Result<Int, LifecycleRefusal> {
        let actions: [LifecycleAction]
        switch machine.decide(request) {
        case .refuse(let refusal): return .failure(refusal)
        case .perform(let steps): actions = steps
        }
        guard let index else { return .failure(machine.refusal(of: .restartService("", isKnown: false))) }
        var id = services[index].id
        for action in actions {
            switch action {
            case .forgetFailures:
                services[index].supervisor?.forgetFailures()
            case .restartRunLoop:
                startRunLoop(index, group: &group)
                announceRestart(of: id, scope: .runLoop)
            case .restartInstance:
                id = await restartInstance(index, group: &group)
            case .stopService(let reason):
                await terminateOne(index, group: &group)
                services[index].disable(reason: reason)
                isHealthCheckDue = true
            default:
                apply(action)
            }
        }
        return .success(id)
    }

    /// A full restart: `willTerminate` to the old instance, a new one from its factory with its
    /// restorable state, its launch hooks and the events to the host's state, in its place in
    /// the order; its supervision carries over.
    /// Returns the id of the service in its place.
    @discardableResult
    mutating func restartInstance(_ index: Int, group: inout DiscardingTaskGroup) async -> Int {
        let old = services[index]
        await terminateOne(index, group: &group)
        let instance: any ApplicationService
        do {
            instance = try old.descriptor.makeService()
        } catch {
            services[index].logger.error("\(old.name) could not be built again: \(error)", metadata: ["service": "\(old.name)"])
            services[index].disable(reason: "could not be built again: \(error)")
            isHealthCheckDue = true
            return old.id
        }
        let id = await launchIntoCurrentState(old.descriptor, service: instance, replacing: index, supervisor: old.supervisor, group: &group)
        // Started again, even if its run loop already ended during the catch-up (booked apart):
        // that was a restart too. A launch that failed or was cut short started none.
        if let restarted = services.first(where: { $0.id == id }), restarted.runLoopID > 0 {
            announceRestart(of: id, scope: .instance, after: old.supervisor?.lastEnding)
        }
        return id
    }

    /// The restart's log line, counter and bus message, once the run loop was started again.
    mutating func announceRestart(of serviceID: Int, scope: RestartPolicy.Scope, after ending: RunLoopEnding? = nil) {
        guard let index = services.firstIndex(where: { $0.id == serviceID }) else { return }
        SupervisionBook.announceRestart(of: &services[index], scope: scope, after: ending, on: bus)
    }
}

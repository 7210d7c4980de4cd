/// Supervision's steps carried out on the loop's services, as the machine decided them: a run
/// loop or an instance started again, a service stopped, an operator's restart.
extension SupervisionBook {
    /// The operator's error for the machine's refusal of a restart.
    static func restartError(_ name: String, _ refusal: LifecycleRefusal, services: [ServiceSlot]) -> ServiceRestartError {
        if case .restartService(_, isKnown: false) = refusal.request, !refusal.isTerminatePending {
            return ServiceRestartError(.noSuchService, service: name, reason: "the services are \(services.map(\.name).joined(separator: ", "))")
        }
        return ServiceRestartError(.notRunning, service: name, reason: refusal.reason)
    }

    /// Performs the steps the machine gave a supervision request on `services[index]`; returns
    /// the id of the service in its place.
    @discardableResult
    static func carryOut(_ actions: [LifecycleAction], of index: Int, loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> Int {
        var id = loop.services[index].id
        for action in actions {
            switch action {
            case .forgetFailures:
                loop.services[index].supervisor?.forgetFailures()
            case .restartRunLoop:
                loop.startRunLoop(index, group: &group)
                loop.announceRestart(of: id, scope: .runLoop)
            case .restartInstance:
                id = await restartInstance(index, loop: &loop, group: &group)
            case .stopService(let reason):
                await loop.terminateOne(index, group: &group)
                loop.services[index].disable(reason: reason)
                loop.isHealthCheckDue = true
            default:
                loop.apply(action)
            }
        }
        return id
    }

    /// A full restart: `willTerminate` to the old instance, a new one from its factory with its
    /// restorable state, its launch hooks and the events to the host's state, in its place in
    /// the order; its supervision carries over.
    /// Returns the id of the service in its place.
    @discardableResult
    static func restartInstance(_ index: Int, loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> Int {
        let old = loop.services[index]
        await loop.terminateOne(index, group: &group)
        let instance: any ApplicationService
        do {
            instance = try old.descriptor.makeService()
        } catch {
            loop.services[index].logger.error("\(old.name) could not be built again: \(error)", metadata: ["service": "\(old.name)"])
            loop.services[index].disable(reason: "could not be built again: \(error)")
            loop.isHealthCheckDue = true
            return old.id
        }
        let id = await LaunchFlow.launchIntoCurrentState(old.descriptor, service: instance, replacing: index, supervisor: old.supervisor, loop: &loop, group: &group)
        // Started again, even if its run loop already ended during the catch-up (booked apart):
        // that was a restart too. A launch that failed or was cut short started none.
        if let restarted = loop.services.first(where: { $0.id == id }), restarted.runLoopID > 0 {
            loop.announceRestart(of: id, scope: .instance, after: old.supervisor?.lastEnding)
        }
        return id
    }
}

extension HostLoop {
    /// A reload as one transaction (see `PluggableApplicationHost.reload(loading:)`): a failure
    /// keeps the running services, shows in the status and is published on the bus.
    mutating func reload(_ load: @escaping @Sendable () throws -> [ServiceDescriptor], group: inout DiscardingTaskGroup) async -> Result<ConfigurationDidReload, InvalidConfiguration> {
        let actions: [LifecycleAction]
        switch machine.decide(.reload) {
        case .perform(let steps): actions = steps
        case .refuse(let refusal): return .failure(InvalidConfiguration(ConfigurationError(keyPath: "", message: refusal.reason)))
        }
        outlet.report(.reloading(status))
        var result: Result<ConfigurationDidReload, InvalidConfiguration> = .success(ConfigurationDidReload(added: [], removed: [], updated: [], restarted: []))
        if case .reloaded(let applied) = await perform(actions, loading: load, group: &group) { result = applied }
        switch result {
        case .success(let report):
            note = nil
            bus.publish(report)
            // At debug: the program that asked says it (apphostd: "reloaded PATH: …", one line
            // per reload), and the report is on the bus and in `reload`'s result.
            logger.debug("configuration reloaded", metadata: [
                "added": "\(report.added)", "removed": "\(report.removed)",
                "updated": "\(report.updated)", "restarted": "\(report.restarted)",
            ])
        case .failure(let errors):
            for line in errors.description.split(separator: "\n") {
                logger.error("reload refused, the running configuration stays: \(line)")
            }
            note = "reload failed: \(errors.summary)"
            bus.publish(ConfigurationReloadDidFail(message: errors.summary))
        }
        return result
    }

    mutating func applyReload(_ load: @Sendable () throws -> [ServiceDescriptor], group: inout DiscardingTaskGroup) async -> Result<ConfigurationDidReload, InvalidConfiguration> {
        // Everything that can fail without side effects first: the file, the names, every new
        // or changed instance.
        let plan: ReloadPlan
        do {
            plan = try ReloadPlan(loading: load, running: services, logger: logger)
        } catch {
            return .failure(error)
        }
        return .success(await plan.apply(to: &self, group: &group))
    }

    /// `willTerminate` to one service, then it is retired (its run loop is cancelled).
    mutating func terminateOne(_ index: Int, group: inout DiscardingTaskGroup) async {
        // A run loop that ends because willTerminate told it to is no failure of its own.
        services[index].supervisor?.retire()
        if services[index].health.isEnabled {
            var tally = HookTally()
            let result = await call(index, .event(.willTerminate), deadline: configuration.terminateDeadline, waitIfBusy: true, group: &group)
            record(result, of: .willTerminate, at: index, in: &tally)
        }
        retire(index)
    }

    /// Launches a service added (or restarted) by a reload and delivers what it missed to reach
    /// the host's state. A failure disables it; the running host is not torn down. Returns its id.
    /// With `replacing`, it takes that service's place in the order (a restart of the whole
    /// service, whose `supervisor` carries over).
    mutating func launchIntoCurrentState(
        _ descriptor: ServiceDescriptor, service: any ApplicationService, replacing replaced: Int? = nil,
        supervisor: RestartSupervisor? = nil, group: inout DiscardingTaskGroup
    ) async -> Int {
        var added = makeService(descriptor, instance: service)
        added.supervisor = supervisor
        let index: Int
        if let replaced {
            services[replaced] = added
            isHealthCheckDue = true
            outlet.publish(status: status)
            index = replaced
        } else {
            setServices(services + [added])
            index = services.count - 1
        }
        guard let options = services[index].context.launchOptions else { return added.id }
        var tally = HookTally()
        if let failure = await launchOne(index, options: options, tally: &tally, group: &group) {
            // A launch a terminate cut short: the service stays, so the terminate that follows
            // gives it willTerminate (behind its launch hook, if that still runs).
            if failure.reason == .terminated, isStarted(index, failure) { return added.id }
            logger.error("service added on reload failed to launch: \(failure)", metadata: ["service": "\(descriptor.name)"])
            services[index].disable(reason: failure.description)
            return added.id
        }
        for event in machine.eventsToCatchUp {
            await fanOut(event, from: machine.state, to: machine.state, only: [index], group: &group)
        }
        return added.id
    }
}

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
        let oldIndex = Dictionary(uniqueKeysWithValues: services.indices.map { (services[$0].name, $0) })
        let (newLeaves, fresh) = (plan.leaves, plan.fresh)
        let newNames = Set(newLeaves.map(\.name))
        var removed: [String] = []
        var updated: [String] = []
        var restarted: [String] = []
        var added: [String] = []
        for index in services.indices.reversed() where !newNames.contains(services[index].name) {
            await terminateOne(index, group: &group)
            removed.append(services[index].name)
        }
        var order: [Int] = []
        for descriptor in newLeaves {
            guard let index = oldIndex[descriptor.name] else {
                order.append(await launchIntoCurrentState(descriptor, service: fresh[descriptor.name]!, group: &group))
                added.append(descriptor.name)
                continue
            }
            guard services[index].descriptor.differs(from: descriptor) else {
                services[index].descriptor.restart = descriptor.restart
                services[index].supervisor?.policy = descriptor.restart
                order.append(services[index].id)
                continue
            }
            if services[index].health.isEnabled, services[index].descriptor.type == descriptor.type, await updateLive(index, to: descriptor, group: &group) {
                order.append(services[index].id)
                updated.append(descriptor.name)
            } else {
                await terminateOne(index, group: &group)
                order.append(await launchIntoCurrentState(descriptor, service: fresh[descriptor.name]!, group: &group))
                restarted.append(descriptor.name)
            }
        }
        for firstOf in plan.newFirstOfs {
            order += await launchAdded(firstOf, services: fresh, added: &added, group: &group)
        }
        // In the new file's order; a first-of's chosen child sits where the first-of does.
        let kept = Set(order)
        let rank = Dictionary(uniqueKeysWithValues: plan.allLeaves.enumerated().map { ($1.name, $0) })
        setServices(services.filter { kept.contains($0.id) }.sorted { rank[$0.name, default: .max] < rank[$1.name, default: .max] })
        restorable.forgetRemovedServices(keeping: services)
        descriptors = plan.descriptors
        choices = descriptors.flatMap { services.compositeChoices(of: $0) }
        return .success(ConfigurationDidReload(added: added, removed: removed, updated: updated, restarted: restarted))
    }

    /// Launches a first-of a reload added into the host's state, as a launch would: its children
    /// in order until one launches whole; a child that fails is taken back. Returns the ids of
    /// the chosen child's services.
    private mutating func launchAdded(_ firstOf: ReloadPlan.NewFirstOf, services fresh: [String: any ApplicationService], added: inout [String], group: inout DiscardingTaskGroup) async -> [Int] {
        var passedOver: [String] = []
        for child in firstOf.children {
            var ids: [Int] = []
            var failure: String?
            for leaf in child.leaves {
                let id = await launchIntoCurrentState(leaf, service: fresh[leaf.name]!, group: &group)
                ids.append(id)
                if let index = services.firstIndex(where: { $0.id == id }), case .disabled(let reason) = services[index].health.condition {
                    failure = reason
                    break
                }
            }
            guard let failure else {
                added += child.leaves.map(\.name)
                LaunchFlow.logFirstOf(firstOf.name, chose: child.name, after: passedOver, logger: logger)
                return ids
            }
            passedOver.append(failure)
            for id in ids.reversed() {
                if let index = services.firstIndex(where: { $0.id == id }) { await terminateOne(index, group: &group) }
            }
        }
        LaunchFlow.logFirstOf(firstOf.name, chose: nil, after: passedOver, logger: logger)
        return []
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

    /// Offers the new settings to the running instance; true when it applied them.
    private mutating func updateLive(_ index: Int, to descriptor: ServiceDescriptor, group: inout DiscardingTaskGroup) async -> Bool {
        let result = await call(index, .didUpdateConfiguration(descriptor.configuration), deadline: services[index].hookDeadline, configuration: descriptor.configuration, group: &group)
        var tally = HookTally()
        record(result, of: .didUpdateConfiguration, at: index, in: &tally)
        guard result == .returned(true) else { return false }
        services[index].descriptor = descriptor
        services[index].supervisor?.policy = descriptor.restart
        services[index].context = services[index].context.with(configuration: descriptor.configuration)
        services[index].hookDeadline = descriptor.deadline ?? configuration.hookDeadline
        services[index].stallLimit = stallLimit(hookDeadline: services[index].hookDeadline)
        services[index].launchDeadline = descriptor.launchDeadline ?? configuration.launchDeadline
        return true
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

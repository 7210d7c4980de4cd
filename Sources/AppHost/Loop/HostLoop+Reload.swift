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
}

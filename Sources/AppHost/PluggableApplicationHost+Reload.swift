import Logging

extension PluggableApplicationHost {
    /// Applies a new service list as one transaction.
    ///
    /// Everything that can fail without side effects is checked first (names, building every new
    /// or changed instance); an error throws and the running services stay as they were. Then
    /// the diff is applied: removed services terminate (reverse order), changed ones are told
    /// through `didUpdateConfiguration` or restarted, added ones launch and are brought to the
    /// current state (active or background, locked or not). A new service that fails to launch
    /// is disabled and reported, whether required or not: the running host is not torn down.
    @discardableResult
    public func reload(_ newDescriptors: [ServiceDescriptor]) async throws(ConfigurationError) -> ConfigurationDidReload {
        try await serially { () throws(ConfigurationError) in try await self.applyReload(newDescriptors) }
    }

    private func applyReload(_ newDescriptors: [ServiceDescriptor]) async throws(ConfigurationError) -> ConfigurationDidReload {
        try Self.checkUniqueNames(newDescriptors)
        guard [.active, .background].contains(machine.state) else {
            throw ConfigurationError(keyPath: "", message: "cannot reload while \(machine.state)")
        }
        let oldByName = Dictionary(uniqueKeysWithValues: slots.map { ($0.name, $0) })
        let newNames = Set(newDescriptors.map(\.name))

        // Build every instance that will be needed before touching anything.
        var fresh: [String: any ApplicationService] = [:]
        for (index, descriptor) in newDescriptors.enumerated() {
            if let old = oldByName[descriptor.name], !old.descriptor.differs(from: descriptor) { continue }
            do {
                fresh[descriptor.name] = try descriptor.makeService()
            } catch let error as ConfigurationError {
                throw error
            } catch {
                throw ConfigurationError(file: descriptor.configuration.file, keyPath: "services[\(index)]", message: "\(descriptor.name): \(error)")
            }
        }

        var removed: [String] = []
        var updated: [String] = []
        var restarted: [String] = []
        var added: [String] = []
        for slot in slots.reversed() where !newNames.contains(slot.name) {
            await terminateOne(slot)
            removed.append(slot.name)
        }

        var newSlots: [ServiceSlot] = []
        for descriptor in newDescriptors {
            guard let old = oldByName[descriptor.name] else {
                let slot = makeSlot(descriptor, service: fresh[descriptor.name]!)
                await launchIntoCurrentState(slot)
                newSlots.append(slot)
                added.append(descriptor.name)
                continue
            }
            guard old.descriptor.differs(from: descriptor) else {
                newSlots.append(old)
                continue
            }
            if old.isEnabled, old.descriptor.type == descriptor.type, await updateLive(old, to: descriptor) {
                let application = Application(serviceName: descriptor.name, configuration: descriptor.configuration, context: context, logger: logger)
                let slot = ServiceSlot(descriptor: descriptor, service: old.service, application: application, hookDeadline: configuration.hookDeadline, launchDeadline: configuration.launchDeadline)
                slot.adoptRunLoop(of: old)
                newSlots.append(slot)
                updated.append(descriptor.name)
            } else {
                await terminateOne(old)
                let slot = makeSlot(descriptor, service: fresh[descriptor.name]!)
                await launchIntoCurrentState(slot)
                newSlots.append(slot)
                restarted.append(descriptor.name)
            }
        }
        slots = newSlots
        descriptors = newDescriptors
        note = nil
        publishStatus()
        let report = ConfigurationDidReload(added: added, removed: removed, updated: updated, restarted: restarted)
        bus.publish(report)
        logger.info("configuration reloaded", metadata: [
            "added": "\(added)", "removed": "\(removed)", "updated": "\(updated)", "restarted": "\(restarted)",
        ])
        return report
    }

    /// Sets a remark shown in the status (a refused reload, say) until the next successful reload.
    public func setNote(_ text: String?) {
        note = text
        publishStatus()
    }

    func makeSlot(_ descriptor: ServiceDescriptor, service: any ApplicationService) -> ServiceSlot {
        let application = Application(serviceName: descriptor.name, configuration: descriptor.configuration, context: context, logger: logger)
        return ServiceSlot(descriptor: descriptor, service: service, application: application, hookDeadline: configuration.hookDeadline, launchDeadline: configuration.launchDeadline)
    }

    private func terminateOne(_ slot: ServiceSlot) async {
        if slot.isEnabled {
            var overruns: [Overrun] = []
            var failures: [String: String] = [:]
            let result = await deliverWillTerminate(to: slot)
            note([result], for: .willTerminate, slots: [slot], overruns: &overruns, failures: &failures)
        }
        slot.stop()
    }

    private func updateLive(_ slot: ServiceSlot, to descriptor: ServiceDescriptor) async -> Bool {
        let application = Application(serviceName: descriptor.name, configuration: descriptor.configuration, context: context, logger: logger)
        let configuration = descriptor.configuration
        let results = await FanOut(slots: [slot], deadline: { $0.hookDeadline }) { service, _ in
            try await service.application(application, didUpdateConfiguration: configuration) == .applied
        }.run()
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        note(results, for: .didUpdateConfiguration, slots: [slot], overruns: &overruns, failures: &failures)
        return results.first == .returned(true)
    }

    /// Launches one service and delivers what it missed to reach the host's state.
    private func launchIntoCurrentState(_ slot: ServiceSlot) async {
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        guard let options = context.snapshot.launchOptions else { return }
        if let failure = await launchOne(slot, options: options, overruns: &overruns, failures: &failures) {
            logger.error("service added on reload failed to launch: \(failure)", metadata: ["service": "\(slot.name)"])
            slot.disable(reason: failure.description)
            return
        }
        var catchUp: [LifecycleEvent] = []
        switch machine.state {
        case .active: catchUp = [.didBecomeActive]
        case .background: catchUp = [.didEnterBackground]
        default: break
        }
        if !context.snapshot.isProtectedDataAvailable { catchUp.append(.protectedDataWillBecomeUnavailable) }
        for event in catchUp {
            await fanOut(event, to: [slot])
        }
        runLoopRequests?.yield(.start(slot))
    }
}

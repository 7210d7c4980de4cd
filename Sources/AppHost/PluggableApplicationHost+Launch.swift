import Logging

extension PluggableApplicationHost {
    /// Launches every service, one by one in registration order, then makes the host active.
    ///
    /// Each service gets `willFinishLaunching` and then `didFinishLaunching`, each under its
    /// launch deadline. A required service that refuses, throws or overruns stops the launch:
    /// the services launched before it get `applicationWillTerminate` in reverse order and
    /// `LaunchFailure` names it. An optional one is disabled and the launch goes on. Then
    /// `didBecomeActive` reaches every launched service.
    @discardableResult
    public func launch() async throws(LaunchFailure) -> LaunchOptions {
        try await serially { () throws(LaunchFailure) in try await self.launchServices() }
    }

    private func launchServices() async throws(LaunchFailure) -> LaunchOptions {
        guard machine.state == .notRunning else {
            throw LaunchFailure(service: "", hook: "", reason: .notLaunchable(machine.state))
        }
        try? move(to: .launching)
        isTerminationRequestedDuringLaunch = false
        let start = ContinuousClock.now
        let options: LaunchOptions
        do {
            options = try configuration.stateDirectory.map { try LaunchStateStore(directory: $0).beginLaunch() }
                ?? LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: .init(), previousExit: .none)
        } catch {
            try? move(to: .terminating)
            try? move(to: .notRunning)
            throw LaunchFailure(service: "", hook: "", reason: .stateDirectory("\(error)"))
        }
        context.update { $0.launchOptions = options }
        slots = descriptors.map { makeSlot($0) }
        publishStatus()

        var launched: [ServiceSlot] = []
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        // One record for the whole launch, failed or not.
        func publishLaunchRecord() {
            bus.publish(LifecycleEventRecord(
                event: .didFinishLaunching, from: .notRunning, to: .launching, duration: ContinuousClock.now - start,
                overruns: overruns, failures: failures, serviceCount: slots.count
            ))
        }
        for (index, slot) in slots.enumerated() {
            if let failure = await launchOne(slot, options: options, overruns: &overruns, failures: &failures) {
                let isTerminated = failure.reason == .terminated
                // A refusal or an overrun is a failure of the launch too, for its record.
                if !isTerminated, failures[slot.name] == nil { failures[slot.name] = failure.description }
                if slot.descriptor.isRequired || isTerminated {
                    if isTerminated {
                        logger.notice("terminate requested during launch: rolling back", metadata: ["service": "\(slot.name)"])
                    } else {
                        logger.error("launch failed: \(failure)", metadata: ["service": "\(slot.name)"])
                        slot.disable(reason: failure.description)
                    }
                    note = isTerminated ? nil : "launch failed: \(failure)"
                    // The launch record comes first even for a failed launch: services that
                    // finished launching expect it (the logger's audit trail waits for it).
                    publishLaunchRecord()
                    slots = launched
                    await terminateServices()
                    throw failure
                }
                logger.warning("optional service disabled: \(failure)", metadata: ["service": "\(slot.name)"])
                slot.disable(reason: failure.description)
                publishStatus()
            } else {
                launched.append(slot)
            }
            let next = index + 1 < slots.count ? slots[index + 1].launchDeadline * 2 : configuration.hookDeadline * max(1, slots.count)
            observer.didProgress(.launching, slot.name, next)
        }
        publishLaunchRecord()
        _ = await fanOut(.didBecomeActive, to: ordered(.up), from: .launching, to: .active, before: { () throws(IllegalTransition) in
            try self.move(to: .active)
        })
        for slot in slots where slot.isEnabled {
            runLoopRequests?.yield(.start(slot))
        }
        publishStatus()
        observer.didLaunch(options, status)
        return options
    }

    func makeSlot(_ descriptor: ServiceDescriptor) -> ServiceSlot {
        do {
            return makeSlot(descriptor, service: try descriptor.makeService())
        } catch {
            let slot = makeSlot(descriptor, service: UnbuildableService())
            slot.disable(reason: "\(error)")
            return slot
        }
    }

    /// Runs both launch steps of one service; nil when it launched.
    func launchOne(_ slot: ServiceSlot, options: LaunchOptions, overruns: inout [Overrun], failures: inout [String: String]) async -> LaunchFailure? {
        if case .disabled(let reason) = slot.health.condition {
            return LaunchFailure(service: slot.name, hook: "init", reason: .invalidConfiguration(reason))
        }
        let steps: [(LifecycleEvent, FanOut.Hook)] = [
            (.willFinishLaunching, { try await $0.application($1, willFinishLaunchingWithOptions: options) }),
            (.didFinishLaunching, { try await $0.application($1, didFinishLaunchingWithOptions: options) }),
        ]
        for (event, hook) in steps {
            guard !isTerminationRequestedDuringLaunch else {
                return LaunchFailure(service: slot.name, hook: event.hookName, reason: .terminated)
            }
            let fanOut = FanOut(slots: [slot], deadline: { $0.launchDeadline }, hook: hook)
            launchFanOut = fanOut
            let result = await fanOut.run()[0]
            launchFanOut = nil
            note([result], for: event, slots: [slot], overruns: &overruns, failures: &failures)
            switch result {
            case .abandoned:
                return LaunchFailure(service: slot.name, hook: event.hookName, reason: .terminated)
            case .returned(true):
                continue
            case .returned(false):
                return LaunchFailure(service: slot.name, hook: event.hookName, reason: .refused)
            case .threw(let error):
                return LaunchFailure(service: slot.name, hook: event.hookName, reason: .threw(error))
            case .overran(let deadline):
                return LaunchFailure(service: slot.name, hook: event.hookName, reason: .overran(deadline))
            case .deferred, .skipped:
                return LaunchFailure(service: slot.name, hook: event.hookName, reason: .threw("not callable"))
            }
        }
        return nil
    }
}

/// Stands in for a service whose factory threw, so its slot can report why it is disabled.
struct UnbuildableService: ApplicationService {}

import Logging

extension HostLoop {
    /// Launches every service, one by one in registration order, then makes the host active.
    ///
    /// Each service gets `willFinishLaunching` and then `didFinishLaunching`, each under its
    /// launch deadline, and its run loop starts. A required service that refuses, throws or
    /// overruns stops the launch: the services launched before it get `applicationWillTerminate`
    /// in reverse order and the failure names it. An optional one is disabled and the launch goes
    /// on. A terminate stops waiting for the hook in progress and rolls back the same way. Then
    /// `didBecomeActive` reaches every launched service.
    mutating func launch(group: inout DiscardingTaskGroup) async -> Result<LaunchOptions, LaunchFailure> {
        let actions: [LifecycleAction]
        switch machine.decide(.launch) {
        case .perform(let steps): actions = steps
        case .refuse(let refusal): return .failure(LaunchFailure(service: "", hook: "", reason: .notLaunchable(refusal.state)))
        }
        var outcome: Result<LaunchOptions, LaunchFailure> = .failure(LaunchFailure(service: "", hook: "", reason: .notLaunchable(machine.state)))
        for action in actions {
            if case .launchServices = action {
                outcome = await launchServices(group: &group)
            } else {
                await perform([action], group: &group)
            }
        }
        return outcome
    }

    /// The `launchServices` step, then the machine's launch completion on success.
    mutating func launchServices(group: inout DiscardingTaskGroup) async -> Result<LaunchOptions, LaunchFailure> {
        let start = ContinuousClock.now
        let options: LaunchOptions
        do {
            options = try configuration.launchState?.beginLaunch()
                ?? LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: .init(), previousExit: .none)
        } catch {
            move(to: .terminating)
            move(to: .notRunning)
            let failure = LaunchFailure(service: "", hook: "", reason: .stateDirectory("\(error)"))
            host.report(.launchFailed(failure, status))
            return .failure(failure)
        }
        logPreviousExit(options)
        var restoredOptions = options
        restore(into: &restoredOptions)
        launchOptions = restoredOptions
        setServices(descriptors.map { makeService($0) })
        forgetRestorableStateOfRemovedServices()
        host.report(.status(status))

        var launched: [Int] = []
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        func launchRecord() -> LifecycleEventRecord {
            LifecycleEventRecord(
                event: .didFinishLaunching, from: .notRunning, to: .launching, duration: ContinuousClock.now - start,
                overruns: overruns, failures: failures, serviceCount: services.count
            )
        }
        for index in services.indices {
            if let failure = await launchOne(index, options: services[index].context.launchOptions ?? restoredOptions, overruns: &overruns, failures: &failures, group: &group) {
                let name = services[index].name
                let isTerminated = failure.reason == .terminated
                // A refusal or an overrun is a failure of the launch too, for its record.
                if !isTerminated, failures[name] == nil { failures[name] = failure.description }
                if services[index].descriptor.isRequired || isTerminated {
                    if isTerminated {
                        logger.notice("terminate requested during launch: rolling back", metadata: ["service": "\(name)"])
                    } else {
                        logger.error("launch failed: \(failure)", metadata: ["service": "\(name)"])
                        services[index].disable(reason: failure.description)
                        note = "launch failed: \(failure)"
                    }
                    // The launch record comes first even for a failed launch: services that
                    // finished launching expect it (the logger's audit trail waits for it).
                    bus.publish(launchRecord())
                    // A service whose launch the terminate cut short may already hold what its
                    // launch hooks set up: it gets willTerminate too, first, as the last to
                    // launch (queued behind its launch hook, if the terminate stopped waiting
                    // for one, within the terminate deadline).
                    let started = isTerminated && isStarted(index, failure) ? [index] : []
                    await terminate(only: launched + started, group: &group)
                    if !isTerminated { host.report(.launchFailed(failure, status)) }
                    return .failure(failure)
                }
                logger.warning("optional service disabled: \(failure)", metadata: ["service": "\(name)"])
                services[index].disable(reason: failure.description)
            } else {
                launched.append(index)
            }
            let next = index + 1 < services.count
                ? services[index + 1].launchDeadline * 2
                : configuration.hookDeadline * max(1, services.count)
            host.report(.progress(next: next))
        }
        bus.publish(launchRecord())
        await perform(machine.launchCompletionActions(intoBackground: restoredOptions.launchesIntoBackground), group: &group)
        return .success(restoredOptions)
    }

    /// Whether a launch that `failure` ended had called a launch hook of `services[index]`: one
    /// is still running (the terminate stopped waiting for it), or the first step returned.
    func isStarted(_ index: Int, _ failure: LaunchFailure) -> Bool {
        services[index].isBusy || failure.hook == LifecycleEvent.didFinishLaunching.hookName
    }

    /// Both launch steps of one service, then the start of its run loop; nil when it launched.
    mutating func launchOne(_ index: Int, options: LaunchOptions, overruns: inout [Overrun], failures: inout [String: String], group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        let name = services[index].name
        if case .disabled(let reason) = services[index].health.condition {
            return LaunchFailure(service: name, hook: "init", reason: .invalidConfiguration(reason))
        }
        let steps: [(LifecycleEvent, HookCall.Hook)] = [
            (.willFinishLaunching, .willFinishLaunching(options)),
            (.didFinishLaunching, .didFinishLaunching(options)),
        ]
        for (event, step) in steps {
            guard !isTerminateRequested, !isCancelled else {
                return LaunchFailure(service: name, hook: event.hookName, reason: .terminated)
            }
            let result = await call(index, step, deadline: services[index].launchDeadline, abandonOnTerminate: true, group: &group)
            record(result, of: event, at: index, overruns: &overruns, failures: &failures)
            switch result {
            case .returned(true): continue
            case .returned(false): return LaunchFailure(service: name, hook: event.hookName, reason: .refused)
            case .threw(let error): return LaunchFailure(service: name, hook: event.hookName, reason: .threw(error))
            case .overran(let deadline): return LaunchFailure(service: name, hook: event.hookName, reason: .overran(deadline))
            case .abandoned: return LaunchFailure(service: name, hook: event.hookName, reason: .terminated)
            case .deferred, .skipped: return LaunchFailure(service: name, hook: event.hookName, reason: .threw("not callable"))
            }
        }
        // The run loop starts before the service's first `didBecomeActive`, so a subscription it
        // makes before it first suspends sees everything published from then on.
        startRunLoop(index, group: &group)
        return nil
    }

    /// The launch's line about how the previous run ended, when the launch state can tell.
    func logPreviousExit(_ options: LaunchOptions) {
        guard let cause = options.previousExitCause else { return }
        let metadata: Logger.Metadata = ["exit_cause": "\(cause)", "launch_count": "\(options.launchCount)"]
        switch cause {
        case .clean:
            logger.info("launch \(options.launchCount); the previous run ended cleanly", metadata: metadata)
        case .unknown:
            logger.notice("launch \(options.launchCount); the previous run ended uncleanly, cause unknown (no exit record: a power loss, a host crash, or a kill outside systemd)", metadata: metadata)
        default:
            logger.notice("launch \(options.launchCount); the previous run ended: \(cause)", metadata: metadata)
        }
    }
}

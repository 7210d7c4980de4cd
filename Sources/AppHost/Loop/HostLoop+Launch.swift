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
        switch await carryOut(.launch, group: &group) {
        case .success(.launched(let outcome)): return outcome
        case .success: return .failure(LaunchFailure(service: "", hook: "", reason: .notLaunchable(machine.state)))
        case .failure(let refusal): return .failure(LaunchFailure(service: "", hook: "", reason: .notLaunchable(refusal.state)))
        }
    }

    /// The `launchServices` step, then the machine's launch completion on success.
    mutating func launchServices(group: inout DiscardingTaskGroup) async -> Result<LaunchOptions, LaunchFailure> {
        let start = ContinuousClock.now
        let options: LaunchOptions
        do {
            options = try configuration.launchState?.beginLaunch()
                ?? LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: .init(), previousExit: .none)
        } catch {
            await carryOut(.abortLaunch, group: &group)
            let failure = LaunchFailure(service: "", hook: "", reason: .stateDirectory("\(error)"))
            outlet.report(.launchFailed(failure, status))
            return .failure(failure)
        }
        logPreviousExit(options)
        var restoredOptions = options
        if let lockReason = restorable.restore(into: &restoredOptions) {
            await carryOut(.restoreSessionLock(reason: lockReason), group: &group)
        }
        launchOptions = restoredOptions
        setServices(descriptors.flatMap { $0.leaves() }.map { makeService($0) })
        restorable.forgetRemovedServices(keeping: services)
        outlet.report(.status(status))

        var progress = LaunchProgress(indexByName: Dictionary(uniqueKeysWithValues: services.indices.map { (services[$0].name, $0) }))
        func launchRecord() -> LifecycleEventRecord {
            LifecycleEventRecord(
                event: .didFinishLaunching, from: .notRunning, to: .launching, duration: ContinuousClock.now - start,
                overruns: progress.tally.overruns, failures: progress.tally.failures, serviceCount: services.count - progress.dropped.count
            )
        }
        if let failure = await launchFlow(descriptors, path: nil, options: restoredOptions, progress: &progress, group: &group) {
            let isTerminated = failure.reason == .terminated
            if isTerminated {
                logger.notice("terminate requested during launch: rolling back", metadata: ["service": "\(failure.service)"])
            } else {
                logger.error("launch failed: \(failure)", metadata: ["service": "\(failure.service)"])
                note = "launch failed: \(failure)"
            }
            // The launch record comes first even for a failed launch: services that finished
            // launching expect it (the logger's audit trail waits for it).
            bus.publish(launchRecord())
            // A service whose launch the terminate cut short may already hold what its launch
            // hooks set up: it gets willTerminate too, first, as the last to launch (queued
            // behind its launch hook, if the terminate stopped waiting for one, within the
            // terminate deadline).
            await terminate(only: progress.launched + (progress.cutShort.map { [$0] } ?? []), group: &group)
            if !isTerminated { outlet.report(.launchFailed(failure, status)) }
            return .failure(failure)
        }
        bus.publish(launchRecord())
        if descriptors.contains(where: \.isComposite) {
            services = services.indices.filter { !progress.dropped.contains($0) }.map { services[$0] }
            choices = descriptors.flatMap { services.compositeChoices(of: $0) }
            outlet.publish(status: status)
        }
        await carryOut(.finishLaunch(intoBackground: restoredOptions.launchesIntoBackground), group: &group)
        return .success(restoredOptions)
    }

    /// Syncs the launch state `beginLaunch()` wrote; a failure costs durability, not the run.
    func makeLaunchDurable() {
        do {
            try configuration.launchState?.makeLaunchDurable()
        } catch {
            logger.warning("launch state not synced to disk: \(error)")
        }
    }

    /// What a launch did so far: whom it launched, whom a first-of left out, what went wrong.
    struct LaunchProgress {
        let indexByName: [String: Int]
        /// Launched services, in launch order.
        var launched: [Int] = []
        /// Services a first-of did not choose: they leave the list when the launch succeeds.
        var dropped: Set<Int> = []
        /// The service a terminate stopped waiting for, inside one of its launch hooks.
        var cutShort: Int?
        var tally = HookTally()
    }

    /// Launches `nodes` as one flow, in order: a required node's failure ends the flow, rolls
    /// back what the flow launched (unless it is the host's own flow, which the caller rolls
    /// back by terminating) and is returned; an optional node's failure disables it and the
    /// flow goes on.
    mutating func launchFlow(_ nodes: [ServiceDescriptor], path: String?, options: LaunchOptions, progress: inout LaunchProgress, group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        let flowStart = progress.launched.count
        for node in nodes {
            let name = path.map { "\($0)/\(node.name)" } ?? node.name
            guard let failure = await launchNode(node, name: name, options: options, progress: &progress, group: &group) else { continue }
            if failure.reason == .terminated { return failure }
            // The rest of a composite that failed gets no calls.
            let launched = Set(progress.launched)
            for leaf in node.leaves(path: path) {
                if let index = progress.indexByName[leaf.name], !launched.contains(index), services[index].health.isEnabled {
                    services[index].disable(reason: "not launched: \(failure)")
                }
            }
            if node.isRequired {
                if let path {
                    let flow = Array(progress.launched[flowStart...])
                    progress.launched.removeSubrange(flowStart...)
                    await rollBack(flow, of: path, because: failure, group: &group)
                }
                return failure
            }
            logger.warning("optional service disabled: \(failure)", metadata: ["service": "\(name)"])
        }
        return nil
    }

    /// Launches one entry: a service, or a composite as its kind says. Nil when it launched.
    mutating func launchNode(_ node: ServiceDescriptor, name: String, options: LaunchOptions, progress: inout LaunchProgress, group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        guard let composite = node.composite else {
            let index = progress.indexByName[name]!
            let failure = await launchOne(index, options: services[index].context.launchOptions ?? options, tally: &progress.tally, group: &group)
            if let failure {
                if failure.reason == .terminated {
                    if isStarted(index, failure) { progress.cutShort = index }
                    return failure
                }
                // A refusal or an overrun is a failure of the launch too, for its record.
                if progress.tally.failures[name] == nil { progress.tally.failures[name] = failure.description }
                services[index].disable(reason: failure.description)
            } else {
                progress.launched.append(index)
            }
            let next = index + 1 < services.count
                ? services[index + 1].launchDeadline * 2
                : configuration.hookDeadline * max(1, services.count)
            outlet.report(.progress(next: next))
            return failure
        }
        switch composite.kind {
        case .group:
            return await launchFlow(composite.children, path: name, options: options, progress: &progress, group: &group)
        case .oneOf(let chosen, let reason):
            logger.info("\(name): one-of chose \(name)/\(chosen) (\(reason))", metadata: ["service": "\(name)"])
            return await launchFlow(composite.candidates.map(composite.member), path: name, options: options, progress: &progress, group: &group)
        case .firstOf:
            var passedOver: [String] = []
            var lastFailure: LaunchFailure?
            for (position, child) in composite.children.enumerated() {
                if let failure = await launchFlow([composite.member(child)], path: name, options: options, progress: &progress, group: &group) {
                    if failure.reason == .terminated { return failure }
                    passedOver.append("\(failure)")
                    lastFailure = failure
                    continue
                }
                // The chosen one is the composite; the children before it failed and those
                // after it are not launched: neither is one of the host's services from now on.
                // Passing over a child is what a first-of is for: not a failure of the launch.
                for other in composite.children.indices where other != position {
                    for leaf in composite.children[other].leaves(path: name) {
                        if let index = progress.indexByName[leaf.name] { progress.dropped.insert(index) }
                        progress.tally.failures[leaf.name] = nil
                    }
                }
                logFirstOf(name, chose: child.name, after: passedOver)
                return nil
            }
            logFirstOf(name, chose: nil, after: passedOver)
            return lastFailure
        }
    }

    /// The launch's line about a first-of: the child it chose and those it passed over, or that
    /// none launched.
    func logFirstOf(_ name: String, chose child: String?, after passedOver: [String]) {
        guard let child else {
            logger.warning("\(name): first-of found no child that launches: \(passedOver.joined(separator: "; "))", metadata: ["service": "\(name)"])
            return
        }
        let after = passedOver.isEmpty ? "" : " after \(passedOver.joined(separator: "; "))"
        logger.info("\(name): first-of chose \(name)/\(child)\(after)", metadata: ["service": "\(name)"])
    }

    /// A group's rollback: `willTerminate` to what it launched, in reverse order; they stay in
    /// the list, disabled with the reason.
    mutating func rollBack(_ launched: [Int], of group: String, because failure: LaunchFailure, group taskGroup: inout DiscardingTaskGroup) async {
        guard !launched.isEmpty else { return }
        logger.notice("\(group): rolling back \(launched.count.counted("service")): \(failure)", metadata: ["service": "\(group)"])
        for index in launched.reversed() {
            await terminateOne(index, group: &taskGroup)
            services[index].disable(reason: "rolled back with \(group): \(failure)")
        }
    }

    /// Whether a launch that `failure` ended had called a launch hook of `services[index]`: one
    /// is still running (the terminate stopped waiting for it), or the first step returned.
    func isStarted(_ index: Int, _ failure: LaunchFailure) -> Bool {
        services[index].isBusy || failure.hook == LifecycleEvent.didFinishLaunching.hookName
    }

    /// Both launch steps of one service, then the start of its run loop; nil when it launched.
    mutating func launchOne(_ index: Int, options: LaunchOptions, tally: inout HookTally, group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        let name = services[index].name
        if case .disabled(let reason) = services[index].health.condition {
            return LaunchFailure(service: name, hook: "init", reason: .invalidConfiguration(reason))
        }
        // A terminate that arrived stops the launch before the next service.
        guard case .perform = machine.decide(.continueLaunch), !isCancelled else {
            return LaunchFailure(service: name, hook: LifecycleEvent.willFinishLaunching.hookName, reason: .terminated)
        }
        // Both hooks in one run: `didFinishLaunching` follows at once when
        // `willFinishLaunching` let the launch go on. A terminate stops waiting for either, as
        // for any launch hook; one that comes as the first answers finds the second begun, and
        // the service gets `willTerminate` once it returns.
        let deadline = services[index].launchDeadline
        let results = await execute(
            [makeCall(index, .willFinishLaunching(options), deadline: deadline), makeCall(index, .didFinishLaunching(options), deadline: deadline)],
            services: [index, index], abandonOnTerminate: true, stopsAtFailure: true, group: &group
        )
        for (event, result) in zip([LifecycleEvent.willFinishLaunching, .didFinishLaunching], results) {
            record(result, of: event, at: index, in: &tally)
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
        if let problem = options.previousHealthProblem {
            logger.notice("the previous run was unhealthy when it ended: \(problem)", metadata: ["health": "\(problem)", "exit_cause": "\(cause)"])
        }
    }
}

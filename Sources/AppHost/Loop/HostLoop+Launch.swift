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
        options.logPreviousExit(to: logger)
        var restoredOptions = options
        if let lockReason = restorable.restore(into: &restoredOptions) {
            await carryOut(.restoreSessionLock(reason: lockReason), group: &group)
        }
        launchOptions = restoredOptions
        setServices(descriptors.flatMap { $0.leaves() }.map { makeService($0) })
        restorable.forgetRemovedServices(keeping: services)
        outlet.report(.status(status))

        var progress = LaunchFlow(services: services)
        func launchRecord() -> LifecycleEventRecord {
            progress.tally.record(of: .didFinishLaunching, from: .notRunning, to: .launching, since: start, serviceCount: services.count - progress.dropped.count)
        }
        if let failure = await progress.launch(descriptors, path: nil, options: restoredOptions, loop: &self, group: &group) {
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
}

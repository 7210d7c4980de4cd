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
        let begun: (options: LaunchOptions, lockReason: String?)
        switch readLaunchOptions() {
        case .success(let launch): begun = launch
        case .failure(let failure):
            await carryOut(.abortLaunch, group: &group)
            outlet.report(.launchFailed(failure, status))
            return .failure(failure)
        }
        if let lockReason = begun.lockReason {
            await carryOut(.restoreSessionLock(reason: lockReason), group: &group)
        }
        let restoredOptions = begun.options
        makeServices(launching: restoredOptions)

        var progress = LaunchFlow(services: services)
        if let failure = await progress.launch(descriptors, path: nil, options: restoredOptions, loop: &self, group: &group) {
            let isTerminated = failure.reason == .terminated
            noteFailedLaunch(failure)
            // The launch record comes first even for a failed launch: services that finished
            // launching expect it (the logger's audit trail waits for it).
            publishLaunchRecord(of: progress, since: start)
            // A service whose launch the terminate cut short may already hold what its launch
            // hooks set up: it gets willTerminate too, first, as the last to launch (queued
            // behind its launch hook, if the terminate stopped waiting for one, within the
            // terminate deadline).
            await terminate(only: progress.launched + (progress.cutShort.map { [$0] } ?? []), group: &group)
            if !isTerminated { outlet.report(.launchFailed(failure, status)) }
            return .failure(failure)
        }
        publishLaunchRecord(of: progress, since: start)
        keepChosen(by: progress)
        await carryOut(.finishLaunch(intoBackground: restoredOptions.launchesIntoBackground), group: &group)
        return .success(restoredOptions)
    }

    // The synchronous steps of `launchServices` are functions of their own, never inlined into
    // it, so their locals stay on the thread's stack: inlined, they made its async frame 7.6 KiB,
    // which the host's task keeps for the daemon's whole life (Benchmarks/README.md, issue 54's
    // fourth slice).

    /// The launch options from the launch state (or a first launch's), logged, with the
    /// restorable state's part; the lock reason when the session was locked when it ended.
    @inline(never)
    private mutating func readLaunchOptions() -> Result<(options: LaunchOptions, lockReason: String?), LaunchFailure> {
        let options: LaunchOptions
        do {
            options = try configuration.launchState?.beginLaunch()
                ?? LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: .init(), previousExit: .none)
        } catch {
            return .failure(LaunchFailure(service: "", hook: "", reason: .stateDirectory("\(error)")))
        }
        options.logPreviousExit(to: logger)
        var restoredOptions = options
        let lockReason = restorable.restore(into: &restoredOptions)
        return .success((restoredOptions, lockReason))
    }

    /// The launch's options kept, the services made from their descriptors (the restorable
    /// state forgets the ones gone), and the status that names them.
    @inline(never)
    private mutating func makeServices(launching options: LaunchOptions) {
        launchOptions = options
        setServices(descriptors.flatMap { $0.leaves() }.map { makeService($0) })
        restorable.forgetRemovedServices(keeping: services)
        outlet.report(.status(status))
    }

    /// The launch's record on the bus, for a launch that succeeded or failed alike.
    @inline(never)
    private func publishLaunchRecord(of progress: LaunchFlow, since start: ContinuousClock.Instant) {
        bus.publish(progress.tally.record(of: .didFinishLaunching, from: .notRunning, to: .launching, since: start, serviceCount: services.count - progress.dropped.count))
    }

    /// The services without the composites' children that were not chosen.
    @inline(never)
    private mutating func keepChosen(by progress: LaunchFlow) {
        guard descriptors.contains(where: \.isComposite) else { return }
        services = services.indices.filter { !progress.dropped.contains($0) }.map { services[$0] }
        choices = descriptors.flatMap { services.compositeChoices(of: $0) }
        outlet.publish(status: status)
    }

    /// The log line and the note of a launch that failed or that a terminate cut short.
    @inline(never)
    private mutating func noteFailedLaunch(_ failure: LaunchFailure) {
        if failure.reason == .terminated {
            logger.notice("terminate requested during launch: rolling back", metadata: ["service": "\(failure.service)"])
        } else {
            logger.error("launch failed: \(failure)", metadata: ["service": "\(failure.service)"])
            note = "launch failed: \(failure)"
        }
    }
}

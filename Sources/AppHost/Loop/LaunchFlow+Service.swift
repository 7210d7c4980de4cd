import Logging

/// One service's launch: both launch steps under its launch deadline, then its run loop; and a
/// service that joins a running host (a reload's, a restart's), launched into its state.
extension LaunchFlow {
    /// Whether a launch that `failure` ended had called a launch hook of `services[index]`: one
    /// is still running (the terminate stopped waiting for it), or the first step returned.
    static func isStarted(_ index: Int, _ failure: LaunchFailure, in services: [ServiceSlot]) -> Bool {
        services[index].isBusy || failure.hook == LifecycleEvent.didFinishLaunching.hookName
    }

    /// Both launch steps of one service, then the start of its run loop; nil when it launched.
    static func launchOne(_ index: Int, options: LaunchOptions, tally: inout HookTally, loop: inout HostLoop, group: inout DiscardingTaskGroup) async -> LaunchFailure? {
        let calls: [HookCall]
        switch launchCalls(index, options: options, loop: &loop) {
        case .success(let both): calls = both
        case .failure(let failure): return failure
        }
        let results = await loop.execute(calls, services: [index, index], abandonOnTerminate: true, stopsAtFailure: true, group: &group)
        if let failure = record(results, at: index, tally: &tally, loop: &loop) { return failure }
        // The run loop starts before the service's first `didBecomeActive`, so a subscription it
        // makes before it first suspends sees everything published from then on.
        loop.startRunLoop(index, group: &group)
        return nil
    }

    // `launchOne`'s synchronous steps are functions of their own, never inlined into the
    // launch's async functions, so their locals stay on the thread's stack: the host's task
    // keeps the slabs of its deepest chain of async frames for the daemon's whole life
    // (Benchmarks/README.md, issue 54's fourth slice).

    /// Both launch hooks of `services[index]` as one run, or why it does not launch.
    @inline(never)
    private static func launchCalls(_ index: Int, options: LaunchOptions, loop: inout HostLoop) -> Result<[HookCall], LaunchFailure> {
        let name = loop.services[index].name
        if case .disabled(let reason) = loop.services[index].health.condition {
            return .failure(LaunchFailure(service: name, hook: "init", reason: .invalidConfiguration(reason)))
        }
        // A terminate that arrived stops the launch before the next service.
        guard case .perform = loop.machine.decide(.continueLaunch), !loop.isCancelled else {
            return .failure(LaunchFailure(service: name, hook: LifecycleEvent.willFinishLaunching.hookName, reason: .terminated))
        }
        // Both hooks in one run: `didFinishLaunching` follows at once when
        // `willFinishLaunching` let the launch go on. A terminate stops waiting for either, as
        // for any launch hook; one that comes as the first answers finds the second begun, and
        // the service gets `willTerminate` once it returns.
        let deadline = loop.services[index].launchDeadline
        return .success([loop.makeCall(index, .willFinishLaunching(options), deadline: deadline), loop.makeCall(index, .didFinishLaunching(options), deadline: deadline)])
    }

    /// The launch hooks' results in the tally; the failure they make, if any.
    @inline(never)
    private static func record(_ results: [HookResult], at index: Int, tally: inout HookTally, loop: inout HostLoop) -> LaunchFailure? {
        let name = loop.services[index].name
        for (event, result) in zip([LifecycleEvent.willFinishLaunching, .didFinishLaunching], results) {
            loop.record(result, of: event, at: index, in: &tally)
            switch result {
            case .returned(true): continue
            case .returned(false): return LaunchFailure(service: name, hook: event.hookName, reason: .refused)
            case .threw(let error): return LaunchFailure(service: name, hook: event.hookName, reason: .threw(error))
            case .overran(let deadline): return LaunchFailure(service: name, hook: event.hookName, reason: .overran(deadline))
            case .abandoned: return LaunchFailure(service: name, hook: event.hookName, reason: .terminated)
            case .deferred, .skipped: return LaunchFailure(service: name, hook: event.hookName, reason: .threw("not callable"))
            }
        }
        return nil
    }

    /// Launches a service added (or restarted) by a reload and delivers what it missed to reach
    /// the host's state. A failure disables it; the running host is not torn down. Returns its id.
    /// With `replacing`, it takes that service's place in the order (a restart of the whole
    /// service, whose `supervisor` carries over).
    static func launchIntoCurrentState(
        _ descriptor: ServiceDescriptor, service: any ApplicationService, replacing replaced: Int? = nil,
        supervisor: RestartSupervisor? = nil, loop: inout HostLoop, group: inout DiscardingTaskGroup
    ) async -> Int {
        var added = loop.makeService(descriptor, instance: service)
        added.supervisor = supervisor
        let index: Int
        if let replaced {
            loop.services[replaced] = added
            loop.isHealthCheckDue = true
            loop.outlet.publish(status: loop.status)
            index = replaced
        } else {
            loop.setServices(loop.services + [added])
            index = loop.services.count - 1
        }
        guard let options = loop.services[index].context.launchOptions else { return added.id }
        var tally = HookTally()
        if let failure = await launchOne(index, options: options, tally: &tally, loop: &loop, group: &group) {
            // A launch a terminate cut short: the service stays, so the terminate that follows
            // gives it willTerminate (behind its launch hook, if that still runs).
            if failure.reason == .terminated, isStarted(index, failure, in: loop.services) { return added.id }
            loop.logger.error("service added on reload failed to launch: \(failure)", metadata: ["service": "\(descriptor.name)"])
            loop.services[index].disable(reason: failure.description)
            return added.id
        }
        for event in loop.machine.eventsToCatchUp {
            await loop.fanOut(event, from: loop.machine.state, to: loop.machine.state, only: [index], group: &group)
        }
        return added.id
    }
}

import Logging
import ServiceContextModule

/// The host's event loop: the state `run()` owns and the one place where every input is handled.
///
/// Inputs — requests, the answers of hook runs, deadline wakes, session lock changes — arrive on
/// one stream. Requests are carried out one at a time, in arrival order; while one waits for a
/// hook, later requests queue, except terminate, which drops the queue (and, during a launch,
/// stops waiting at once). A fan-out is one run of inline hook calls in a child task, watched
/// against each call's deadline; a hook that overruns leaves its service busy (its later calls
/// queue behind it) and the loop goes on with the next service in a new run.
struct HostLoop {
    let host: PluggableApplicationHost
    var inputs: AsyncStream<HostInput>.AsyncIterator
    let timer: AsyncStream<ContinuousClock.Instant>.Continuation

    var machine = LifecycleStateMachine()
    var descriptors: [ServiceDescriptor]
    var services: [ServiceSlot] = [] {
        didSet { serviceHealth = nil }
    }
    /// `services`' health as the last status listed it; nil once `services` changed. A request
    /// that changes no service's health reuses the list, and its status compares equal to the
    /// last one without comparing each service.
    var serviceHealth: [ServiceHealth]?
    /// Why the host is unhealthy, as `checkHealth()` last found (`HostStatus.healthProblem`).
    var healthProblem: String?
    /// Something that can change the host's health happened (a deadline passed, a late hook
    /// returned, a service reported): `checkHealth()` looks at the end of the request.
    var isHealthCheckDue = false
    var nextServiceID = 0
    var nextToken = 0
    /// Runs of calls queued behind a late hook, by token: whose they are.
    var backlogRuns: [Int: (serviceID: Int, run: HookRun)] = [:]
    var timerWakes: [ContinuousClock.Instant] = []

    var queue: [(request: HostRequest, context: ServiceContext)] = []
    /// The context of the terminate request, once one came.
    var terminateContext: ServiceContext?
    var sessionLockChanges: [SessionLockDidChange] = []
    var launchWaiters: [Reply<LaunchOptions, LaunchFailure>] = []
    var terminateReplies: [Reply<Void, Never>] = []
    /// Why the pending terminate came, for its log line and `STOPPING=1`'s status.
    var terminateReason = ""
    /// A step of the request in progress asked for the restorable state on disk at its end.
    var isPersistDue = false
    /// The input stream ended: the task running the host was cancelled.
    var isCancelled = false

    var launchOptions: LaunchOptions?
    var launchOutcome: Result<LaunchOptions, LaunchFailure>?
    var lastOverrun: Overrun?
    var note: String?
    var lastReportedStatus: HostStatus?
    var restorable = RestorableBook()
    /// What each first-of and one-of runs (`HostStatus.choices`), as of the launch or the last
    /// reload.
    var choices: [String] = []

    init(host: PluggableApplicationHost, inputs: AsyncStream<HostInput>.AsyncIterator, timer: AsyncStream<ContinuousClock.Instant>.Continuation) {
        self.host = host
        self.inputs = inputs
        self.timer = timer
        self.descriptors = host.services
    }

    var configuration: PluggableApplicationHost.Configuration { host.configuration }
    var logger: Logger { host.logger }
    var bus: MessageBus { host.bus }

    // MARK: The loop

    /// Launches, serves requests until terminate, and answers whatever is left.
    mutating func run(group: inout DiscardingTaskGroup) async -> Result<Void, LaunchFailure> {
        // The launch is a request too: the context of whoever runs the host, with an id.
        let launch = await ServiceContext.withValue(.forRequest(ServiceContext.current)) {
            let launch = await self.launch(group: &group)
            // The launch ends with its READY=1 (and its restorable state kept): only then does
            // `launched()` answer.
            if case .success = launch { await finishRequest(ready: true, group: &group) }
            // After READY=1 (or the failed launch's report), off the way to readiness; only a
            // launch state that was begun has anything to sync.
            if launchOptions != nil { makeLaunchDurable() }
            return launch
        }
        launchOutcome = launch
        host.publish(launch: launch)
        for waiter in launchWaiters { waiter.resume(returning: launch) }
        launchWaiters = []
        if case .success = launch {
            while machine.state.isRunning {
                if machine.isTerminatePending || isCancelled {
                    await ServiceContext.withValue(terminateContext ?? .forRequest(nil)) {
                        await terminate(group: &group)
                    }
                } else if !queue.isEmpty {
                    let (request, context) = queue.removeFirst()
                    await ServiceContext.withValue(context) {
                        await handle(request, group: &group)
                    }
                } else if let input = await nextIdleInput() {
                    _ = take(input, group: &group)
                    // A lock change, restorable bytes or a change of health outside any request:
                    // a request of its own.
                    if !sessionLockChanges.isEmpty || restorable.hasStaged || isHealthCheckDue { await finishRequest(group: &group) }
                }
            }
        }
        await close()
        return launch.map { _ in () }
    }

    /// Takes a request off the stream: terminate at once, the others into the queue.
    mutating func accept(_ request: HostRequest, context: ServiceContext) {
        switch request {
        case .terminate(let reason, let reply):
            if let reply { terminateReplies.append(reply) }
            guard case .perform(let actions) = machine.decide(.terminate), !actions.isEmpty else { return }
            terminateContext = context
            terminateReason = reason
            for action in actions { apply(action) }
        case .launched(let reply):
            if let launchOutcome { reply.resume(returning: launchOutcome) } else { launchWaiters.append(reply) }
        case .terminated(let reply):
            terminateReplies.append(reply)
        default:
            // Once a terminate is pending the machine refuses every request: answered at once.
            if machine.isTerminatePending {
                drop(request)
            } else {
                queue.append((request, context))
            }
        }
    }

    /// Answers a request the host will not carry out, with the machine's refusal.
    func drop(_ request: HostRequest) {
        if machine.isTerminatePending { logger.notice("\(request.name) dropped: terminate comes first") }
        request.refuse(by: machine, launch: launchOutcome)
    }

    mutating func handle(_ request: HostRequest, group: inout DiscardingTaskGroup) async {
        switch request {
        case .lifecycle(let transition, let reply):
            switch machine.decide(transition.request) {
            case .perform(let actions):
                await perform(actions, group: &group)
                await finishRequest(group: &group)
                let moved = actions.contains { if case .move = $0 { true } else { false } }
                reply.resume(returning: .success(moved ? machine.state : nil))
            case .refuse(let refusal):
                logger.notice("\(request.name) ignored: \(refusal.illegalTransition)", metadata: ["reason": "\(refusal.reason)"])
                reply.resume(returning: .failure(refusal.illegalTransition))
            }
        case .memoryWarning(let level, let reply):
            switch machine.decide(.memoryWarning(level)) {
            case .perform(let actions):
                host.metrics.countMemoryWarning(level)
                await perform(actions, group: &group)
                await finishRequest(group: &group)
                reply.resume(returning: .success(()))
            case .refuse(let refusal):
                reply.resume(returning: .failure(refusal.illegalTransition))
            }
        case .sessionLock(let locked, let reason, let reply):
            switch await applySessionLock(SessionLockDidChange(isLocked: locked, reason: reason ?? ""), group: &group) {
            case .success(let changed):
                await finishRequest(group: &group)
                reply.resume(returning: .success(changed))
            case .failure(let refusal):
                reply.resume(returning: .failure(refusal.illegalTransition))
            }
        case .reload(let load, let reply):
            let result = await reload(load, group: &group)
            host.metrics.countReload(applied: (try? result.get()) != nil)
            await finishRequest(ready: true, group: &group)
            reply.resume(returning: result)
        case .note(let text, let reply):
            note = text
            await finishRequest(group: &group)
            reply.resume(returning: .success(()))
        case .barrier(let body, let reply):
            body()
            reply.resume(returning: .success(()))
        case .launched, .terminated, .terminate:
            accept(request, context: .forRequest(ServiceContext.current))
        }
    }

    /// Ends a request: session lock changes published during it are applied, the restorable
    /// state is kept if it changed, then one status (with `READY=1` after a launch or reload)
    /// describes the state after it; a step that asked for it (background, memory warning) also
    /// has the restorable state written to disk, after the status. With a terminate pending,
    /// only the terminate reports.
    mutating func finishRequest(ready: Bool = false, group: inout DiscardingTaskGroup) async {
        while !sessionLockChanges.isEmpty {
            // Refused once a terminate is pending: the terminate runs next.
            await applySessionLock(sessionLockChanges.removeFirst(), group: &group)
        }
        let persist = isPersistDue
        isPersistDue = false
        guard !machine.isTerminatePending else { return }
        keepRestorableState()
        defer { persistRestorableState(always: persist) }
        if isHealthCheckDue { checkHealth() }
        if serviceHealth == nil, !services.isEmpty { serviceHealth = services.map { $0.health } }
        let current = status
        host.publish(status: current)
        if ready {
            host.report(.ready(current))
        } else if current != lastReportedStatus {
            host.report(.status(current))
        }
        lastReportedStatus = current
    }

    /// Retires every service and answers what is left: the run is over.
    mutating func close() async {
        for index in services.indices {
            retire(index)
            if services[index].isBusy {
                logger.warning("\(services[index].name) is still inside a hook; the host's run ends when it returns", metadata: ["service": "\(services[index].name)"])
            }
        }
        for (request, _) in queue { request.refuse(by: machine, launch: launchOutcome) }
        queue = []
        host.input.finish()
        while let input = await inputs.next() {
            if case .request(let request, _) = input { request.refuse(by: machine, launch: launchOutcome) }
        }
        for reply in terminateReplies { reply.resume(returning: .success(())) }
        terminateReplies = []
    }

    // MARK: State and status

    var status: HostStatus {
        HostStatus(
            state: machine.state,
            services: services.isEmpty
                ? descriptors.flatMap { $0.leaves() }.map { ServiceHealth(name: $0.name, isRequired: $0.isRequired, condition: .healthy) }
                : serviceHealth ?? services.map { $0.health },
            lastOverrun: lastOverrun,
            note: note,
            sessionLockReason: machine.isProtectedDataAvailable ? nil : (machine.sessionLockReason ?? ""),
            healthProblem: healthProblem,
            choices: choices
        ).withRequestID(ServiceContext.current?.hostRequestID)
    }

    mutating func move(to target: ApplicationState) {
        do {
            try machine.transition(to: target)
        } catch {
            logger.critical("lifecycle bug: \(error)")
        }
        host.publish(status: status)
    }

    /// What a step that answers with a result (the launch, the reload) produced.
    enum StepOutcome {
        case launched(Result<LaunchOptions, LaunchFailure>)
        case reloaded(Result<ConfigurationDidReload, InvalidConfiguration>)
    }

    /// Performs the machine's steps in order; returns what the launch or reload step produced.
    /// `terminating` limits `terminateServices` to those services (a rolled-back launch);
    /// `loading` is the reload's new configuration.
    @discardableResult
    mutating func perform(
        _ actions: [LifecycleAction], terminating indices: [Int]? = nil,
        loading load: (@Sendable () throws -> [ServiceDescriptor])? = nil, group: inout DiscardingTaskGroup
    ) async -> StepOutcome? {
        var outcome: StepOutcome?
        for action in actions {
            switch action {
            case .deliver(let event, let from, let to): await fanOut(event, from: from, to: to, group: &group)
            case .terminateServices: await terminateServices(only: indices, group: &group)
            case .launchServices: outcome = .launched(await launchServices(group: &group))
            case .reloadConfiguration:
                outcome = .reloaded(await applyReload(load ?? { throw ConfigurationError(keyPath: "", message: "the reload named no configuration") }, group: &group))
            default: apply(action)
            }
        }
        return outcome
    }

    /// Asks the machine about a request of the host's own (a launch step, terminate) and
    /// performs its steps; the refusal when it has none.
    @discardableResult
    mutating func carryOut(_ request: LifecycleRequest, terminating indices: [Int]? = nil, group: inout DiscardingTaskGroup) async -> Result<StepOutcome?, LifecycleRefusal> {
        switch machine.decide(request) {
        case .perform(let actions): .success(await perform(actions, terminating: indices, group: &group))
        case .refuse(let refusal): .failure(refusal)
        }
    }

    /// The steps that wait for nothing.
    mutating func apply(_ action: LifecycleAction) {
        switch action {
        case .move(let target): move(to: target)
        case .trimHeap(let level): configuration.trimHeap?(level)
        case .setProtectedDataAvailable(let available): machine.setProtectedDataAvailable(available)
        case .setSessionLockReason(let reason): machine.setSessionLockReason(reason)
        case .persistRestorableState: isPersistDue = true
        case .setTerminatePending:
            machine.setTerminatePending()
            logger.notice("terminating: \(terminateReason)")
            host.report(.stopping(reason: terminateReason))
        case .dropQueuedRequests:
            for (dropped, _) in queue { drop(dropped) }
            queue = []
        case .deliver, .terminateServices, .launchServices, .reloadConfiguration:
            logger.critical("lifecycle bug: \(action) needs the loop to wait; it went to apply(_:)")
        }
    }

    /// Locks or unlocks the session and fans out the protected-data event; false when the
    /// session already was that way (a new reason for a lock is still taken).
    @discardableResult
    mutating func applySessionLock(_ change: SessionLockDidChange, group: inout DiscardingTaskGroup) async -> Result<Bool, LifecycleRefusal> {
        switch machine.decide(.sessionLock(change.isLocked, reason: change.reason)) {
        case .refuse(let refusal):
            return .failure(refusal)
        case .perform(let actions):
            guard !actions.isEmpty else { return .success(false) }
            await perform(actions, group: &group)
            host.publish(status: status)
            return .success(actions.contains { if case .setProtectedDataAvailable = $0 { true } else { false } })
        }
    }

    // MARK: Hooks

    /// Delivers `event` to every enabled service (registration order going up, reverse going
    /// down), one after the other, each under its deadline, and publishes its record.
    @discardableResult
    mutating func fanOut(_ event: LifecycleEvent, from: ApplicationState, to: ApplicationState, only indices: [Int]? = nil, group: inout DiscardingTaskGroup) async -> [HookResult] {
        let start = ContinuousClock.now
        let targets = indices ?? (event.direction == .up ? Array(services.indices) : Array(services.indices.reversed()))
        let results = await call(targets, .event(event), group: &group)
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        for (index, result) in zip(targets, results) {
            record(result, of: event, at: index, overruns: &overruns, failures: &failures)
        }
        bus.publish(LifecycleEventRecord(
            event: event, from: from, to: to, duration: ContinuousClock.now - start,
            overruns: overruns, failures: failures, serviceCount: targets.count
        ))
        return results
    }

    /// One hook of one service, under `deadline`. A service still busy in an overrunning hook
    /// gets the call queued behind it and is not waited for, unless `waitIfBusy` (its last call).
    /// With `abandonOnTerminate`, a terminate stops the wait.
    mutating func call(
        _ index: Int,
        _ hook: HookCall.Hook,
        deadline: Duration,
        configuration override: ServiceConfiguration? = nil,
        waitIfBusy: Bool = false,
        abandonOnTerminate: Bool = false,
        group: inout DiscardingTaskGroup
    ) async -> HookResult {
        guard services[index].health.isEnabled else { return .skipped }
        let call = makeCall(index, hook, deadline: deadline, configuration: override)
        if services[index].isBusy {
            services[index].backlog.append(call)
            guard waitIfBusy else { return .deferred }
            logger.debug("\(services[index].name) is still in an earlier hook; waiting for its \(hook.name)", metadata: ["service": "\(services[index].name)"])
            return await waitUntilFree(index, until: .now + deadline, deadline: deadline, group: &group)
        }
        return await execute([call], services: [index], abandonOnTerminate: abandonOnTerminate, group: &group)[0]
    }

    /// One hook of each of `indices`, in that order; services busy in an overrunning hook get
    /// theirs queued (`.deferred`).
    mutating func call(_ indices: [Int], _ hook: HookCall.Hook, group: inout DiscardingTaskGroup) async -> [HookResult] {
        var results = [HookResult](repeating: .skipped, count: indices.count)
        var calls: [HookCall] = []
        var positions: [Int] = []
        calls.reserveCapacity(indices.count)
        positions.reserveCapacity(indices.count)
        for (position, index) in indices.enumerated() where services[index].health.isEnabled {
            let call = makeCall(index, hook, deadline: services[index].hookDeadline)
            if services[index].isBusy {
                services[index].backlog.append(call)
                results[position] = .deferred
            } else {
                calls.append(call)
                positions.append(position)
            }
        }
        let made = await execute(calls, services: positions.map { indices[$0] }, abandonOnTerminate: false, group: &group)
        for (position, result) in zip(positions, made) { results[position] = result }
        return results
    }

    func makeCall(_ index: Int, _ hook: HookCall.Hook, deadline: Duration, configuration override: ServiceConfiguration? = nil) -> HookCall {
        HookCall(serviceID: services[index].id, service: services[index].service, hook: hook, application: application(for: index, configuration: override), deadline: deadline)
    }

    /// The handle a hook of `services[index]` gets now.
    func application(for index: Int, configuration override: ServiceConfiguration? = nil) -> ApplicationHandle {
        ApplicationHandle(
            context: override.map { services[index].context.with(configuration: $0) } ?? services[index].context,
            state: machine.state,
            isSessionLocked: !machine.isProtectedDataAvailable,
            serviceCount: services.count
        )
    }

    /// Makes `calls` (of `owners`, by index) in order in a child task and waits for each until
    /// its deadline; a call that overruns leaves its service busy and a new run goes on with
    /// the calls after it. With `stopsAtFailure`, no call follows one that did not return
    /// `true` or overran (those not made stay `.skipped`).
    mutating func execute(_ calls: [HookCall], services owners: [Int], abandonOnTerminate: Bool, stopsAtFailure: Bool = false, group: inout DiscardingTaskGroup) async -> [HookResult] {
        var results = [HookResult](repeating: .skipped, count: calls.count)
        var start = 0
        while start < calls.count {
            nextToken += 1
            let run = HookRun(token: nextToken, calls: Array(calls[start...]), stopsAtFailure: stopsAtFailure)
            let answers = host.input
            group.addTask { await run.perform(answers: answers) }
            waiting: while true {
                if isCancelled || (abandonOnTerminate && machine.isTerminatePending) {
                    let abandoned = run.abandon()
                    let made = run.results
                    for offset in made.indices { results[start + offset] = made[offset] }
                    if let abandoned {
                        // Not waited for: still running (its service is busy until it returns),
                        // or never begun.
                        results[start + abandoned.position] = .abandoned
                        if abandoned.started { services[owners[start + abandoned.position]].isBusy = true }
                    }
                    return results
                }
                if let look = run.nextLook(now: .now) { armTimer(at: look) }
                guard let input = await nextInput() else { continue }
                switch take(input, group: &group) {
                case .runFinished(let token) where token == run.token:
                    let made = run.results
                    for offset in made.indices { results[start + offset] = made[offset] }
                    start = calls.count
                    break waiting
                case .deadlinePassed:
                    guard let (position, startedAt) = run.handOverIfOverdue(now: .now) else { continue }
                    let made = run.results
                    for offset in 0..<position { results[start + offset] = made[offset] }
                    results[start + position] = .overran(calls[start + position].deadline)
                    services[owners[start + position]].isBusy = true
                    services[owners[start + position]].busySince = (startedAt, calls[start + position].hook.name)
                    isHealthCheckDue = true
                    start = stopsAtFailure ? calls.count : start + position + 1
                    break waiting
                case .runFinished, .nothing:
                    continue
                }
            }
        }
        return results
    }

    /// Waits until a busy service made every call queued behind its late hook (the last of them
    /// its `willTerminate`), or `instant` passes.
    mutating func waitUntilFree(_ index: Int, until instant: ContinuousClock.Instant, deadline: Duration, group: inout DiscardingTaskGroup) async -> HookResult {
        while services[index].isBusy {
            if isCancelled { return .abandoned }
            armTimer(at: instant)
            guard let input = await nextInput() else { continue }
            if case .deadlinePassed = take(input, group: &group), ContinuousClock.now >= instant, services[index].isBusy {
                return .overran(deadline)
            }
        }
        return .returned(true)
    }

    /// What an input means to a caller that waits for something: the one place every input
    /// is handled.
    enum InputEffect {
        /// Handled here (a request queued, a late answer or lock change booked).
        case nothing
        /// A run, not one of a busy service's backlog, made all its calls.
        case runFinished(token: Int)
        /// A deadline wake: whoever waits looks at the clock.
        case deadlinePassed
    }

    /// Books `input`: requests are accepted (terminate at once), late answers free their
    /// service, lock changes wait for the end of the request, wakes are crossed off.
    mutating func take(_ input: HostInput, group: inout DiscardingTaskGroup) -> InputEffect {
        switch input {
        case .request(let request, let context):
            accept(request, context: context)
        case .runFinished(let token):
            guard backlogRuns[token] != nil else { return .runFinished(token: token) }
            backlogFinished(token, group: &group)
        case .lateAnswer(let serviceID, let hook, let result):
            lateAnswer(serviceID, hook, result, group: &group)
        case .sessionLockChanged(let change):
            sessionLockChanges.append(change)
        case .restorableStateStaged:
            // Bytes kept while the loop was idle: the run loop keeps them as a request of its own.
            restorable.hasStaged = true
        case .healthReported:
            for index in services.indices {
                let report = services[index].reportedHealth.current
                if services[index].healthReport != report { services[index].healthReport = report }
            }
            isHealthCheckDue = true
        case .deadline(let wake):
            timerWakes.removeAll { $0 == wake }
            isHealthCheckDue = true
            return .deadlinePassed
        }
        return .nothing
    }

    /// The next input; nil once the stream ended, which only cancellation of the host's task
    /// does (then `isCancelled` is set).
    mutating func nextInput() async -> HostInput? {
        guard let input = await inputs.next() else {
            isCancelled = true
            return nil
        }
        return input
    }

    /// The next input while no request is in progress. Only while the loop waits here do
    /// services' restorable bytes nudge it (`PluggableApplicationHost.stageRestorableState`):
    /// during a request they wait for its end, without waking the loop for nothing.
    mutating func nextIdleInput() async -> HostInput? {
        host.isLoopIdle.store(true, ordering: .sequentiallyConsistent)
        defer { host.isLoopIdle.store(false, ordering: .sequentiallyConsistent) }
        // Staged before the loop came here: no nudge was sent for them.
        if host.hasStagedRestorableState.load(ordering: .sequentiallyConsistent) { return .restorableStateStaged }
        return await nextInput()
    }

    /// Wakes the loop at `instant` unless an earlier wake is pending.
    mutating func armTimer(at instant: ContinuousClock.Instant) {
        guard timerWakes.allSatisfy({ $0 > instant }) else { return }
        timerWakes.append(instant)
        timer.yield(instant)
    }

    /// A late hook returned: its service runs what queued behind it, then is free again.
    mutating func lateAnswer(_ serviceID: Int, _ hook: String, _ result: HookResult, group: inout DiscardingTaskGroup) {
        guard let index = services.firstIndex(where: { $0.id == serviceID }) else { return }
        logLate(services[index].name, hook, result)
        runBacklog(index, group: &group)
    }

    /// Starts the calls queued behind a late hook, or frees the service when there are none.
    mutating func runBacklog(_ index: Int, group: inout DiscardingTaskGroup) {
        isHealthCheckDue = true
        guard !services[index].backlog.isEmpty else {
            services[index].isBusy = false
            services[index].busySince = nil
            return
        }
        services[index].busySince = (.now, services[index].backlog[0].hook.name)
        nextToken += 1
        let run = HookRun(token: nextToken, calls: services[index].backlog)
        services[index].backlog = []
        backlogRuns[run.token] = (services[index].id, run)
        let answers = host.input
        group.addTask { await run.perform(answers: answers) }
    }

    /// A run of queued calls ended; what they did is logged, and the service is free unless
    /// more calls queued meanwhile.
    mutating func backlogFinished(_ token: Int, group: inout DiscardingTaskGroup) {
        guard let (serviceID, run) = backlogRuns.removeValue(forKey: token) else { return }
        for (call, result) in zip(run.calls, run.results) { logLate(call.application.serviceName, call.hook.name, result) }
        guard let index = services.firstIndex(where: { $0.id == serviceID }) else { return }
        runBacklog(index, group: &group)
    }

    func logLate(_ service: String, _ hook: String, _ result: HookResult) {
        if case .threw(let error) = result {
            logger.error("\(service) threw in \(hook) (it ran late): \(error)", metadata: ["service": "\(service)"])
        } else {
            logger.info("\(service) finished \(hook) late", metadata: ["service": "\(service)"])
        }
    }

    /// Logs and records what went wrong in one hook.
    mutating func record(_ result: HookResult, of event: LifecycleEvent, at index: Int, overruns: inout [Overrun], failures: inout [String: String]) {
        let name = services[index].name
        switch result {
        case .returned, .skipped, .abandoned:
            return
        case .deferred:
            logger.warning("\(name) is still in an earlier hook; \(event.hookName) queued behind it", metadata: ["service": "\(name)", "event": "\(event.name)"])
        case .threw(let error):
            failures[name] = error
            services[index].health.lastError = error
            logger.error("\(name) threw in \(event.hookName): \(error)", metadata: ["service": "\(name)", "event": "\(event.name)"])
        case .overran(let deadline):
            let overrun = Overrun(service: name, hook: event.hookName, deadline: deadline)
            overruns.append(overrun)
            services[index].health.lastOverrun = overrun
            lastOverrun = overrun
            services[index].context.metrics.countOverrun()
            logger.warning("\(overrun)", metadata: ["service": "\(name)", "event": "\(event.name)", "deadline": "\(deadline.configText)"])
        }
    }

    // MARK: Services

    /// Builds the service (a factory that throws leaves it disabled).
    mutating func makeService(_ descriptor: ServiceDescriptor, instance: (any ApplicationService)? = nil) -> ServiceSlot {
        var problem: String?
        let service: any ApplicationService
        if let instance {
            service = instance
        } else {
            do {
                service = try descriptor.makeService()
            } catch {
                service = UnbuildableService()
                problem = "\(error)"
            }
        }
        nextServiceID += 1
        var logger = self.logger
        logger[metadataKey: "service"] = .string(descriptor.name)
        // What it kept last: from the previous run at the launch, the newest bytes when a
        // reload adds it again or restarts it (its old instance's willTerminate included).
        takeStagedRestorableState()
        var options = launchOptions
        options?.restoredState = restorable.services[descriptor.name]
        let staged = StagedRestorableState()
        let host = self.host
        var keep: (@Sendable ([UInt8]) -> Void)?
        if configuration.restorableState != nil {
            keep = { host.stageRestorableState($0, in: staged) }
        }
        let reportedHealth = ReportedHealth()
        let hookDeadline = descriptor.deadline ?? configuration.hookDeadline
        var hosted = ServiceSlot(
            id: nextServiceID,
            descriptor: descriptor,
            service: service,
            logger: logger,
            health: ServiceHealth(name: descriptor.name, isRequired: descriptor.isRequired, condition: .healthy),
            hookDeadline: hookDeadline,
            launchDeadline: descriptor.launchDeadline ?? configuration.launchDeadline,
            stallLimit: stallLimit(hookDeadline: hookDeadline),
            reportedHealth: reportedHealth,
            context: ApplicationHandle.Context(
                serviceName: descriptor.name, logger: logger, configuration: descriptor.configuration, bus: bus,
                launchOptions: options, stateDirectory: configuration.stateDirectory, keepRestorableState: keep,
                reportHealth: { host.healthReported($0, in: reportedHealth) },
                metrics: ServiceMetrics(serviceName: descriptor.name, factory: host.metrics.factory),
                sharedState: host.sharedState
            ),
            stagedState: staged
        )
        if let problem { hosted.disable(reason: problem) }
        return hosted
    }

    /// Starts the service's `run(_:)` in a child task; what it does before it first suspends
    /// (subscribing to the bus) is done when this returns.
    mutating func startRunLoop(_ index: Int, group: inout DiscardingTaskGroup) {
        let (stop, stopper) = AsyncStream<Never>.makeStream()
        services[index].runLoopStop = stopper
        let service = services[index].service
        let application = application(for: index)
        // A run loop outlives the request that started it: it runs in no request's context.
        ServiceContext.withValue(nil) {
            group.addImmediateTask { await ServiceSlot.runLoop(of: service, application, until: stop) }
        }
    }

    /// The service gets no further calls; its run loop is cancelled.
    mutating func retire(_ index: Int) {
        services[index].runLoopStop?.finish()
        services[index].runLoopStop = nil
    }

    /// Replaces the service list (after launch, rollback or reload).
    mutating func setServices(_ newServices: [ServiceSlot]) {
        services = newServices
        host.publish(status: status)
    }
}

extension HostLoop {
    /// A service's stall limit: the host's, else three times its hook deadline; never shorter
    /// than that deadline.
    func stallLimit(hookDeadline: Duration) -> Duration {
        max(configuration.stallLimit ?? hookDeadline * 3, hookDeadline)
    }

    /// Finds why the host is unhealthy now, if it is: the first required service (registration
    /// order) stuck in one hook past its stall limit, or that reported itself unhealthy. Logs a
    /// change, and arms a wake for the next stall limit a busy service can reach.
    mutating func checkHealth() {
        isHealthCheckDue = false
        let now = ContinuousClock.now
        var problem: String?
        var nextStall: ContinuousClock.Instant?
        for service in services where service.descriptor.isRequired && service.health.isEnabled {
            if service.isBusy, let busy = service.busySince {
                if now - busy.instant >= service.stallLimit {
                    problem = problem ?? "\(service.name) stuck in \(busy.hook) for more than \(service.stallLimit.configText)"
                } else {
                    nextStall = min(nextStall ?? busy.instant + service.stallLimit, busy.instant + service.stallLimit)
                }
            }
            if let report = service.healthReport { problem = problem ?? "\(service.name) reports: \(report)" }
        }
        if let nextStall { armTimer(at: nextStall) }
        guard problem != healthProblem else { return }
        if let problem {
            logger.error("unhealthy: \(problem)", metadata: ["health": "\(problem)"])
        } else {
            logger.notice("healthy again (was: \(healthProblem ?? ""))")
        }
        healthProblem = problem
    }
}

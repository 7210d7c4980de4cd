import Logging

/// The host's event loop: the state `run()` owns and the one place where every input is handled.
///
/// Inputs — requests, workers' answers, deadline wakes, session lock changes — arrive on one
/// stream. Requests are carried out one at a time, in arrival order; while one waits for a hook,
/// later requests queue, except terminate, which drops the queue (and, during a launch, stops
/// waiting at once). Each hook is sent to its service's worker and awaited until its deadline;
/// a hook that overruns leaves its worker busy and the loop moves on.
struct HostLoop {
    let host: PluggableApplicationHost
    var inputs: AsyncStream<HostInput>.AsyncIterator
    let timer: AsyncStream<ContinuousClock.Instant>.Continuation

    var machine = LifecycleStateMachine()
    var descriptors: [ServiceDescriptor]
    var workers: [ServiceWorker] = []
    /// Worker id → index in `workers`, for answers that come late.
    var workerIndex: [Int: Int] = [:]
    var nextWorkerID = 0
    var nextJobID = 0
    /// Jobs that overran or were queued behind one, by id: the hook's name, for their late answer.
    var lateJobs: [Int: (service: String, hook: String)] = [:]
    var timerWakes: [ContinuousClock.Instant] = []

    var queue: [HostRequest] = []
    var sessionLockChanges: [SessionLockDidChange] = []
    var launchWaiters: [Reply<LaunchOptions, LaunchFailure>] = []
    var terminateReplies: [Reply<Void, Never>] = []
    var isTerminateRequested = false
    /// The input stream ended: the task running the host was cancelled.
    var isCancelled = false

    var launchOptions: LaunchOptions?
    var launchOutcome: Result<LaunchOptions, LaunchFailure>?
    var isProtectedDataAvailable = true
    var sessionLockReason: String?
    var lastOverrun: Overrun?
    var note: String?
    var lastReportedStatus: HostStatus?

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
        let launch = await self.launch(group: &group)
        launchOutcome = launch
        host.publish(launch: launch)
        for waiter in launchWaiters { waiter.resume(returning: launch) }
        launchWaiters = []
        if case .success = launch {
            await finishRequest(ready: true)
            while machine.state.isRunning {
                if isTerminateRequested || isCancelled {
                    await terminate()
                } else if !queue.isEmpty {
                    await handle(queue.removeFirst(), group: &group)
                } else if let input = await inputs.next() {
                    switch input {
                    case .request(let request): accept(request)
                    case .jobFinished(let worker, let job, let result): settle(worker: worker, job: job, result, awaited: false)
                    case .sessionLockChanged(let change):
                        await applySessionLock(change)
                        await finishRequest()
                    case .deadline(let instant): timerWakes.removeAll { $0 == instant }
                    }
                } else {
                    isCancelled = true
                }
            }
        }
        await close()
        return launch.map { _ in () }
    }

    /// Takes a request off the stream: terminate at once, the others into the queue.
    mutating func accept(_ request: HostRequest) {
        switch request {
        case .terminate(let reason, let reply):
            if let reply { terminateReplies.append(reply) }
            guard !isTerminateRequested else { return }
            isTerminateRequested = true
            logger.notice("terminating: \(reason)")
            host.report(.stopping(reason: reason))
            for dropped in queue {
                logger.notice("\(dropped.name) dropped: terminate comes first")
                dropped.refuse(state: .terminating, launch: launchOutcome)
            }
            queue = []
        case .launched(let reply):
            if let launchOutcome { reply.resume(returning: launchOutcome) } else { launchWaiters.append(reply) }
        case .terminated(let reply):
            terminateReplies.append(reply)
        default:
            if isTerminateRequested {
                logger.notice("\(request.name) dropped: terminate comes first")
                request.refuse(state: .terminating, launch: launchOutcome)
            } else {
                queue.append(request)
            }
        }
    }

    mutating func handle(_ request: HostRequest, group: inout DiscardingTaskGroup) async {
        switch request {
        case .lifecycle(let lifecycleRequest, let reply):
            do {
                let actions = try machine.actions(for: lifecycleRequest)
                await perform(actions)
                await finishRequest()
                reply.resume(returning: .success(actions.isEmpty ? nil : machine.state))
            } catch {
                logger.notice("\(request.name) ignored: \(error)")
                reply.resume(returning: .failure(error))
            }
        case .memoryWarning(let level, let reply):
            guard machine.state.isRunning, machine.state != .launching else {
                reply.resume(returning: .failure(IllegalTransition(from: machine.state, to: machine.state)))
                return
            }
            await fanOut(.didReceiveMemoryWarning(level), from: machine.state, to: machine.state)
            configuration.trimHeap?(level)
            await finishRequest()
            reply.resume(returning: .success(()))
        case .sessionLock(let locked, let reason, let reply):
            guard [.active, .inactive, .background].contains(machine.state) else {
                reply.resume(returning: .failure(IllegalTransition(from: machine.state, to: machine.state)))
                return
            }
            let changed = await applySessionLock(SessionLockDidChange(isLocked: locked, reason: reason ?? ""))
            await finishRequest()
            reply.resume(returning: .success(changed))
        case .reload(let load, let reply):
            let result = await reload(load, group: &group)
            await finishRequest(ready: true)
            reply.resume(returning: result)
        case .note(let text, let reply):
            note = text
            await finishRequest()
            reply.resume(returning: .success(()))
        case .barrier(let body, let reply):
            body()
            reply.resume(returning: .success(()))
        case .launched, .terminated, .terminate:
            accept(request)
        }
    }

    /// Ends a request: session lock changes published during it are applied, then one status
    /// (with `READY=1` after a launch or reload) describes the state after it.
    mutating func finishRequest(ready: Bool = false) async {
        while !sessionLockChanges.isEmpty, !isTerminateRequested {
            await applySessionLock(sessionLockChanges.removeFirst())
        }
        guard !isTerminateRequested else { return }
        let current = status
        host.publish(status: current)
        if ready {
            host.report(.ready(current))
        } else if current != lastReportedStatus {
            host.report(.status(current))
        }
        lastReportedStatus = current
    }

    /// Stops every worker and answers what is left: the run is over.
    mutating func close() async {
        for worker in workers {
            worker.jobs.finish()
            if worker.unfinishedJobs > 0 {
                logger.warning("\(worker.name) is still inside a hook; the host's run ends when it returns", metadata: ["service": "\(worker.name)"])
            }
        }
        for request in queue { request.refuse(state: machine.state, launch: launchOutcome) }
        queue = []
        host.input.finish()
        while let input = await inputs.next() {
            if case .request(let request) = input { request.refuse(state: machine.state, launch: launchOutcome) }
        }
        for reply in terminateReplies { reply.resume(returning: .success(())) }
        terminateReplies = []
    }

    // MARK: State and status

    var status: HostStatus {
        HostStatus(
            state: machine.state,
            services: workers.isEmpty
                ? descriptors.map { ServiceHealth(name: $0.name, isRequired: $0.isRequired, condition: .healthy) }
                : workers.map(\.health),
            lastOverrun: lastOverrun,
            note: note,
            sessionLockReason: isProtectedDataAvailable ? nil : (sessionLockReason ?? "")
        )
    }

    mutating func move(to target: ApplicationState) {
        do {
            try machine.transition(to: target)
        } catch {
            logger.critical("lifecycle bug: \(error)")
        }
        host.publish(status: status)
    }

    mutating func perform(_ actions: [LifecycleAction]) async {
        for action in actions {
            switch action {
            case .move(let target): move(to: target)
            case .deliver(let event, let from, let to): await fanOut(event, from: from, to: to)
            }
        }
    }

    /// Locks or unlocks the session and fans out the protected-data event; false when the
    /// session already was that way (a new reason for a lock is still taken).
    @discardableResult
    mutating func applySessionLock(_ change: SessionLockDidChange) async -> Bool {
        guard [.active, .inactive, .background].contains(machine.state) else { return false }
        let available = !change.isLocked
        guard isProtectedDataAvailable != available else {
            if change.isLocked, !change.reason.isEmpty, change.reason != sessionLockReason {
                sessionLockReason = change.reason
                host.publish(status: status)
            }
            return false
        }
        sessionLockReason = change.isLocked ? change.reason : nil
        if change.isLocked {
            await fanOut(.protectedDataWillBecomeUnavailable, from: machine.state, to: machine.state)
            isProtectedDataAvailable = false
        } else {
            isProtectedDataAvailable = true
            await fanOut(.protectedDataDidBecomeAvailable, from: machine.state, to: machine.state)
        }
        host.publish(status: status)
        return true
    }

    // MARK: Hooks

    /// Delivers `event` to every enabled service (registration order going up, reverse going
    /// down), one after the other, each under its deadline, and publishes its record.
    @discardableResult
    mutating func fanOut(_ event: LifecycleEvent, from: ApplicationState, to: ApplicationState, only indices: [Int]? = nil) async -> [HookResult] {
        let start = ContinuousClock.now
        let targets = indices ?? Array(event.direction == .up ? Array(workers.indices) : workers.indices.reversed())
        var results: [HookResult] = []
        results.reserveCapacity(targets.count)
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        for index in targets {
            let result = await call(index, .event(event), deadline: workers[index].hookDeadline)
            record(result, of: event, at: index, overruns: &overruns, failures: &failures)
            results.append(result)
        }
        bus.publish(LifecycleEventRecord(
            event: event, from: from, to: to, duration: ContinuousClock.now - start,
            overruns: overruns, failures: failures, serviceCount: targets.count
        ))
        return results
    }

    /// Sends one call to a service's worker and waits for its answer until `deadline`. A service
    /// still busy in an overrunning hook gets the call queued and is not waited for, unless
    /// `waitIfBusy` (its last call). With `abandonOnTerminate`, a terminate stops the wait.
    mutating func call(
        _ index: Int,
        _ call: HookCall,
        deadline: Duration,
        configuration override: ServiceConfiguration? = nil,
        waitIfBusy: Bool = false,
        abandonOnTerminate: Bool = false
    ) async -> HookResult {
        guard workers[index].health.isEnabled else { return .skipped }
        let wasBusy = workers[index].unfinishedJobs > 0
        let job = send(call, to: index, configuration: override)
        if wasBusy, !waitIfBusy {
            lateJobs[job] = (workers[index].name, Self.hookName(call))
            return .deferred
        }
        if wasBusy {
            logger.debug("\(workers[index].name) is still in an earlier hook; waiting for its \(Self.hookName(call))", metadata: ["service": "\(workers[index].name)"])
        }
        let result = await wait(for: job, of: index, until: .now + deadline, deadline: deadline, abandonOnTerminate: abandonOnTerminate)
        switch result {
        case .overran, .abandoned: lateJobs[job] = (workers[index].name, Self.hookName(call))
        default: break
        }
        return result
    }

    mutating func send(_ call: HookCall, to index: Int, configuration override: ServiceConfiguration? = nil) -> Int {
        nextJobID += 1
        workers[index].unfinishedJobs += 1
        let worker = workers[index]
        let application = HostedApplication(
            serviceName: worker.name,
            logger: worker.logger,
            configuration: override ?? worker.descriptor.configuration,
            bus: bus,
            state: machine.state,
            launchOptions: launchOptions,
            isSessionLocked: !isProtectedDataAvailable,
            stateDirectory: configuration.stateDirectory
        )
        worker.jobs.yield(ServiceJob(id: nextJobID, call: call, application: application))
        return nextJobID
    }

    /// Reads inputs until job `job` answers or its deadline passes; queues what else arrives.
    mutating func wait(for job: Int, of index: Int, until instant: ContinuousClock.Instant, deadline: Duration, abandonOnTerminate: Bool) async -> HookResult {
        while true {
            if isCancelled || (abandonOnTerminate && isTerminateRequested) { return .abandoned }
            if timerWakes.allSatisfy({ $0 > instant }) {
                timerWakes.append(instant)
                timer.yield(instant)
            }
            guard let input = await inputs.next() else {
                isCancelled = true
                continue
            }
            switch input {
            case .jobFinished(let worker, let finished, let result):
                settle(worker: worker, job: finished, result, awaited: finished == job)
                if finished == job { return result }
            case .deadline(let wake):
                timerWakes.removeAll { $0 == wake }
                if ContinuousClock.now >= instant { return .overran(deadline) }
            case .request(let request):
                accept(request)
            case .sessionLockChanged(let change):
                sessionLockChanges.append(change)
            }
        }
    }

    /// Books a finished job; a late one (overran or queued behind one) is logged.
    mutating func settle(worker id: Int, job: Int, _ result: HookResult, awaited: Bool) {
        if let index = workerIndex[id] { workers[index].unfinishedJobs -= 1 }
        guard !awaited, let late = lateJobs.removeValue(forKey: job) else { return }
        if case .threw(let error) = result {
            logger.error("\(late.service) threw in \(late.hook) (it ran late): \(error)", metadata: ["service": "\(late.service)"])
        } else {
            logger.info("\(late.service) finished \(late.hook) late", metadata: ["service": "\(late.service)"])
        }
    }

    /// Logs and records what went wrong in one hook.
    mutating func record(_ result: HookResult, of event: LifecycleEvent, at index: Int, overruns: inout [Overrun], failures: inout [String: String]) {
        let name = workers[index].name
        switch result {
        case .returned, .skipped, .abandoned:
            return
        case .deferred:
            logger.warning("\(name) is still in an earlier hook; \(event.hookName) queued behind it", metadata: ["service": "\(name)", "event": "\(event.name)"])
        case .threw(let error):
            failures[name] = error
            workers[index].health.lastError = error
            logger.error("\(name) threw in \(event.hookName): \(error)", metadata: ["service": "\(name)", "event": "\(event.name)"])
        case .overran(let deadline):
            let overrun = Overrun(service: name, hook: event.hookName, deadline: deadline)
            overruns.append(overrun)
            workers[index].health.lastOverrun = overrun
            lastOverrun = overrun
            logger.warning("\(overrun)", metadata: ["service": "\(name)", "event": "\(event.name)", "deadline": "\(deadline.configText)"])
        }
    }

    static func hookName(_ call: HookCall) -> String {
        switch call {
        case .willFinishLaunching: LifecycleEvent.willFinishLaunching.hookName
        case .didFinishLaunching: LifecycleEvent.didFinishLaunching.hookName
        case .didUpdateConfiguration: LifecycleEvent.didUpdateConfiguration.hookName
        case .event(let event): event.hookName
        case .startRunLoop: "run"
        }
    }

    // MARK: Workers

    /// Builds the service (a factory that throws leaves it disabled) and starts its worker.
    mutating func spawnWorker(_ descriptor: ServiceDescriptor, service: (any ApplicationService)? = nil, group: inout DiscardingTaskGroup) -> ServiceWorker {
        var problem: String?
        let instance: any ApplicationService
        if let service {
            instance = service
        } else {
            do {
                instance = try descriptor.makeService()
            } catch {
                instance = UnbuildableService()
                problem = "\(error)"
            }
        }
        nextWorkerID += 1
        let (jobs, mailbox) = AsyncStream<ServiceJob>.makeStream(bufferingPolicy: .unbounded)
        let id = nextWorkerID
        let answers = host.input
        group.addTask { await ServiceWorker.work(id: id, service: instance, jobs: jobs, answers: answers) }
        var logger = self.logger
        logger[metadataKey: "service"] = .string(descriptor.name)
        var worker = ServiceWorker(
            id: id,
            descriptor: descriptor,
            service: instance,
            logger: logger,
            jobs: mailbox,
            health: ServiceHealth(name: descriptor.name, isRequired: descriptor.isRequired, condition: .healthy),
            hookDeadline: descriptor.deadline ?? configuration.hookDeadline,
            launchDeadline: descriptor.launchDeadline ?? configuration.launchDeadline
        )
        if let problem { worker.disable(reason: problem) }
        return worker
    }

    /// Replaces the worker list (after launch, rollback or reload).
    mutating func setWorkers(_ newWorkers: [ServiceWorker]) {
        workers = newWorkers
        workerIndex = Dictionary(uniqueKeysWithValues: workers.enumerated().map { ($1.id, $0) })
        host.publish(status: status)
    }
}

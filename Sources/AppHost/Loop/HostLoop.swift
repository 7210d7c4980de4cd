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
///
/// What to do on each turn is the machine's (`LifecycleStateMachine.nextTurn`), as is every
/// request's decision. The loop waits and performs: +Input (taking input), +Request (carrying
/// out a request and ending it), +FanOut (hooks under deadlines), +Services, +Launch, +Reload,
/// +Supervision, +Terminate. It owns its parts, each with its own state: `queue`
/// (`RequestQueue`), `hooks` (`HookScheduler`), `restorable` (`RestorableStateKeeper`),
/// `supervision` (`SupervisionBook`) and `health` (`HealthBook`); it publishes through `outlet`
/// only.
struct HostLoop {
    /// The one way the loop makes its state known and takes the services' nudges.
    let outlet: HostOutlet
    let configuration: PluggableApplicationHost.Configuration
    let logger: Logger
    let bus: MessageBus
    let sharedState: SharedStateStore
    var inputs: AsyncStream<HostInput>.AsyncIterator

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
    var health = HealthBook()
    /// Something that can change the host's health happened (a deadline passed, a late hook
    /// returned, a service reported): `checkHealth()` looks at the end of the request.
    var isHealthCheckDue = false
    var nextServiceID = 0
    /// The runs of hook calls, the calls queued behind late hooks, and the timer's wakes.
    var hooks: HookScheduler
    /// The restarts and stops booked, and when the next is due.
    var supervision = SupervisionBook()

    var queue = RequestQueue()
    /// The context of the terminate request, once one came.
    var terminateContext: ServiceContext?
    var sessionLockChanges: [SessionLockDidChange] = []
    var launchWaiters: [Reply<LaunchOptions, LaunchFailure>] = []
    var terminateReplies: [Reply<Void, Never>] = []
    /// Why the pending terminate came, for its log line and `STOPPING=1`'s status.
    var terminateReason = ""
    /// The input stream ended: the task running the host was cancelled.
    var isCancelled = false

    var launchOptions: LaunchOptions?
    var launchOutcome: Result<LaunchOptions, LaunchFailure>?
    var lastOverrun: Overrun?
    /// Why the host came to its state (`HostStatus.cause`): the cause of the request that last
    /// moved it.
    var stateCause: String?
    var note: String?
    /// The services' restorable bytes, kept and persisted.
    var restorable: RestorableStateKeeper
    /// What each first-of and one-of runs (`HostStatus.choices`), as of the launch or the last
    /// reload.
    var choices: [String] = []

    init(host: PluggableApplicationHost, inputs: AsyncStream<HostInput>.AsyncIterator, timer: AsyncStream<ContinuousClock.Instant>.Continuation) {
        self.outlet = host.outlet
        self.configuration = host.configuration
        self.logger = host.logger
        self.bus = host.bus
        self.sharedState = host.sharedState
        self.restorable = RestorableStateKeeper(storage: host.configuration.restorableState, logger: host.logger, sharedState: host.sharedState, outlet: host.outlet)
        self.inputs = inputs
        self.hooks = HookScheduler(timer: timer, outlet: host.outlet)
        self.descriptors = host.services
    }

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
            if launchOptions != nil { configuration.launchState?.makeLaunchDurable(logger: logger) }
            return launch
        }
        launchOutcome = launch
        outlet.publish(launch: launch)
        for waiter in launchWaiters { waiter.resume(returning: launch) }
        launchWaiters = []
        if case .success = launch {
            // The machine orders the work: terminate, then a due supervision step, then the queue.
            turns: while true {
                let due = dueSupervision(at: .now)
                switch machine.nextTurn(isCancelled: isCancelled, isSupervisionDue: due != nil, hasQueuedRequest: !queue.isEmpty) {
                case .close:
                    break turns
                case .terminate:
                    await ServiceContext.withValue(terminateContext ?? .forRequest(nil)) {
                        await terminate(group: &group)
                    }
                case .supervise:
                    guard let (index, step) = due else { continue }
                    await ServiceContext.withValue(.forRequest(nil)) {
                        await supervise(index, step, group: &group)
                    }
                case .carryOutQueued:
                    let (request, context) = queue.removeFirst()
                    await ServiceContext.withValue(context) {
                        await handle(request, group: &group)
                    }
                case .wait:
                    guard let input = await nextIdleInput() else { continue }
                    _ = take(input, group: &group)
                    // A lock change, restorable bytes or a change of health outside any request:
                    // a request of its own.
                    if let cause = sessionLockChanges.first?.cause {
                        // The machine asked (logind's screen lock): a request with its cause.
                        var context = ServiceContext.forRequest(nil)
                        context.hostRequestCause = cause
                        await ServiceContext.withValue(context) { await finishRequest(group: &group) }
                    } else if !sessionLockChanges.isEmpty || restorable.hasStaged || isHealthCheckDue {
                        await finishRequest(group: &group)
                    }
                }
            }
        }
        await close()
        return launch.map { _ in () }
    }

    /// Retires every service and answers what is left: the run is over.
    mutating func close() async {
        for index in services.indices {
            retire(index)
            if services[index].isBusy {
                logger.warning("\(services[index].name) is still inside a hook; the host's run ends when it returns", metadata: ["service": "\(services[index].name)"])
            }
        }
        for request in queue.removeAll() { request.refuse(by: machine, launch: launchOutcome) }
        outlet.input.finish()
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
            cause: stateCause,
            services: services.isEmpty
                ? descriptors.flatMap { $0.leaves() }.map { ServiceHealth(name: $0.name, isRequired: $0.isRequired, type: $0.type, condition: .healthy) }
                : serviceHealth ?? services.map(\.statusHealth),
            lastOverrun: lastOverrun,
            note: note,
            sessionLockReason: machine.isProtectedDataAvailable ? nil : (machine.sessionLockReason ?? ""),
            healthProblem: health.problem,
            choices: choices,
            networkPath: sharedState[NetworkPathKey.self],
            powerState: sharedState[PowerStateKey.self]
        ).withRequestID(ServiceContext.current?.hostRequestID)
    }

    mutating func move(to target: ApplicationState) {
        do {
            try machine.transition(to: target)
        } catch {
            logger.critical("lifecycle bug: \(error)")
        }
        stateCause = ServiceContext.current?.hostRequestCause
        outlet.publish(status: status)
    }
}

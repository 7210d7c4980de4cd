import Logging

/// Hosts application services and drives them through the UIKit-style lifecycle.
///
/// Every request (launch, background, foreground, memory warning, session lock, reload,
/// terminate) passes one serial path in arrival order, so events never interleave. Going-up
/// events reach services in registration order, going-down events in reverse; every service is
/// asked, each under a deadline. See the design's "host's promises".
public actor PluggableApplicationHost {
    /// Host-wide settings.
    public struct Configuration: Sendable {
        /// Default deadline of a lifecycle hook.
        public var hookDeadline: Duration
        /// Default deadline of each launch step (`willFinishLaunching`, `didFinishLaunching`).
        public var launchDeadline: Duration
        /// Deadline of `applicationWillTerminate`.
        public var terminateDeadline: Duration
        /// Where launch state lives; nil keeps it in memory (every launch is a first launch).
        public var stateDirectory: String?
        /// Called after a memory warning reached every service; the daemon passes `malloc_trim`.
        public var trimHeap: (@Sendable (MemoryWarningLevel) -> Void)?

        /// Settings with the given values.
        public init(
            hookDeadline: Duration = .seconds(5),
            launchDeadline: Duration = .seconds(30),
            terminateDeadline: Duration = .seconds(10),
            stateDirectory: String? = nil,
            trimHeap: (@Sendable (MemoryWarningLevel) -> Void)? = nil
        ) {
            self.hookDeadline = hookDeadline
            self.launchDeadline = launchDeadline
            self.terminateDeadline = terminateDeadline
            self.stateDirectory = stateDirectory
            self.trimHeap = trimHeap
        }
    }

    /// Callbacks for whoever reports the host to the outside (the daemon's `sd_notify`). They are
    /// called on the serial path, in order, and must not block.
    public struct Observer: Sendable {
        /// The status changed; the daemon sends it as `STATUS=`.
        public var statusDidChange: @Sendable (HostStatus) -> Void
        /// A launch or terminate step of one service finished and the next may take up to the
        /// given time; the daemon sends `EXTEND_TIMEOUT_USEC=`.
        public var didProgress: @Sendable (_ phase: ApplicationState, _ finished: String, _ next: Duration) -> Void
        /// Launch completed and the host is active; the daemon sends `READY=1`.
        public var didLaunch: @Sendable (LaunchOptions, HostStatus) -> Void

        /// An observer with the given callbacks.
        public init(
            statusDidChange: @escaping @Sendable (HostStatus) -> Void = { _ in },
            didProgress: @escaping @Sendable (_ phase: ApplicationState, _ finished: String, _ next: Duration) -> Void = { _, _, _ in },
            didLaunch: @escaping @Sendable (LaunchOptions, HostStatus) -> Void = { _, _ in }
        ) {
            self.statusDidChange = statusDidChange
            self.didProgress = didProgress
            self.didLaunch = didLaunch
        }
    }

    enum RunLoopRequest: Sendable {
        case start(ServiceSlot)
        case terminate
    }

    /// The bus services talk through.
    public nonisolated let bus: MessageBus
    let configuration: Configuration
    let observer: Observer
    let logger: Logger
    let context: ApplicationContext
    let gate = SerialGate()
    var machine = LifecycleStateMachine()
    var descriptors: [ServiceDescriptor]
    var slots: [ServiceSlot] = []
    var lastOverrun: Overrun?
    var note: String?
    var sessionLockReason: String?
    var runLoopRequests: AsyncStream<RunLoopRequest>.Continuation?
    var lastPublishedStatus: HostStatus?
    /// Set by `terminate()` while launching: the launch stops at once and rolls back.
    var isTerminationRequestedDuringLaunch = false
    /// The launch hook in progress, so that `terminate()` can stop waiting for it.
    var launchFanOut: FanOut?

    /// A host for `services`, in registration order.
    /// - Throws: `ConfigurationError` when two services share a name.
    public init(
        services: [ServiceDescriptor],
        configuration: Configuration = Configuration(),
        observer: Observer = Observer(),
        logger: Logger = Logger(label: "apphost"),
        bus: MessageBus = MessageBus()
    ) throws(ConfigurationError) {
        try Self.checkUniqueNames(services)
        self.descriptors = services
        self.configuration = configuration
        self.observer = observer
        self.logger = logger
        self.bus = bus
        self.context = ApplicationContext(bus: bus, stateDirectory: configuration.stateDirectory)
    }

    static func checkUniqueNames(_ services: [ServiceDescriptor]) throws(ConfigurationError) {
        var seen: Set<String> = []
        for (index, descriptor) in services.enumerated() where !seen.insert(descriptor.name).inserted {
            throw ConfigurationError(
                file: descriptor.configuration.file, keyPath: "services[\(index)].name",
                message: "duplicate service name \"\(descriptor.name)\"",
                hint: "give each instance its own name"
            )
        }
    }

    /// The current lifecycle state.
    public var state: ApplicationState { machine.state }

    /// The host's status: state, per-service health, last overrun.
    public var status: HostStatus {
        HostStatus(
            state: machine.state,
            services: slots.isEmpty
                ? descriptors.map { ServiceHealth(name: $0.name, isRequired: $0.isRequired, condition: .healthy) }
                : slots.map(\.health),
            lastOverrun: lastOverrun,
            note: note,
            sessionLockReason: context.snapshot.isProtectedDataAvailable ? nil : (sessionLockReason ?? "")
        )
    }

    /// Services in registration order, by instance name.
    public var serviceNames: [String] { descriptors.map(\.name) }

    // MARK: Requests

    /// Moves `active → inactive → background`: `willResignActive`, then `didEnterBackground`.
    /// Returns false (and emits nothing) when already in the background.
    @discardableResult
    public func enterBackground() async throws(IllegalTransition) -> Bool {
        try await serially { () throws(IllegalTransition) in try await self.goToBackground() }
    }

    /// Moves `background → inactive → active`: `willEnterForeground`, then `didBecomeActive`.
    /// Returns false (and emits nothing) when already active.
    @discardableResult
    public func enterForeground() async throws(IllegalTransition) -> Bool {
        try await serially { () throws(IllegalTransition) in try await self.goToForeground() }
    }

    /// Background when active, foreground when in the background (what SIGUSR1 does). Returns
    /// the new state.
    @discardableResult
    public func toggleBackground() async throws(IllegalTransition) -> ApplicationState {
        try await serially { () throws(IllegalTransition) in
            if self.machine.state == .background {
                _ = try await self.goToForeground()
            } else {
                _ = try await self.goToBackground()
            }
            return self.machine.state
        }
    }

    /// Tells every service (registration order) and then trims the heap.
    public func receiveMemoryWarning(level: MemoryWarningLevel) async throws(IllegalTransition) {
        try await serially { () throws(IllegalTransition) in
            guard self.machine.state.isRunning, self.machine.state != .launching else {
                throw IllegalTransition(from: self.machine.state, to: self.machine.state)
            }
            _ = await self.fanOut(.didReceiveMemoryWarning(level), to: self.ordered(.up))
            self.configuration.trimHeap?(level)
        }
    }

    /// Locks or unlocks the session: `protectedDataWillBecomeUnavailable` (reverse order) or
    /// `protectedDataDidBecomeAvailable` (registration order). Returns false when nothing changed.
    /// `reason` shows in the status while the session stays locked.
    @discardableResult
    public func setSessionLocked(_ locked: Bool, reason: String? = nil) async throws(IllegalTransition) -> Bool {
        try await serially { () throws(IllegalTransition) in
            guard self.machine.state.isRunning, self.machine.state != .launching else {
                throw IllegalTransition(from: self.machine.state, to: self.machine.state)
            }
            let available = !locked
            guard self.context.snapshot.isProtectedDataAvailable != available else {
                if locked, let reason, reason != self.sessionLockReason {
                    self.sessionLockReason = reason
                    self.publishStatus()
                }
                return false
            }
            self.sessionLockReason = locked ? reason : nil
            if locked {
                _ = await self.fanOut(.protectedDataWillBecomeUnavailable, to: self.ordered(.down))
                self.context.update { $0.isProtectedDataAvailable = false }
            } else {
                self.context.update { $0.isProtectedDataAvailable = true }
                _ = await self.fanOut(.protectedDataDidBecomeAvailable, to: self.ordered(.up))
            }
            self.publishStatus()
            return true
        }
    }

    /// Runs `body` on the serial path, after every request that arrived before it. The daemon
    /// pings the watchdog this way, so a host stuck in a fan-out stops pinging.
    public func onSerialPath(_ body: @Sendable () -> Void) async {
        await serially { body() }
    }

    /// Terminates: `willTerminate` to every service in reverse order, then `notRunning`. Ends
    /// `run()`. A second call, or a call before launch, does nothing.
    ///
    /// During launch it does not wait for the launch to finish: the host stops waiting for the
    /// hook in progress, rolls back the services already launched, and `launch()` throws
    /// `LaunchFailure` with reason `.terminated`.
    public func terminate() async {
        if machine.state == .launching {
            isTerminationRequestedDuringLaunch = true
            launchFanOut?.abandon()
        }
        await serially { await self.terminateServices() }
    }

    // MARK: Serial path

    func serially<Result: Sendable, Failure: Error>(_ body: () async throws(Failure) -> Result) async throws(Failure) -> Result {
        await gate.acquire()
        defer { gate.release() }
        return try await body()
    }

    func ordered(_ direction: LifecycleEvent.Direction) -> [ServiceSlot] {
        direction == .up ? slots : slots.reversed()
    }

    func move(to target: ApplicationState) throws(IllegalTransition) {
        try machine.transition(to: target)
        let state = machine.state
        context.update { $0.state = state }
    }

    private func goToBackground() async throws(IllegalTransition) -> Bool {
        switch machine.state {
        case .background: return false
        case .active: break
        default: throw IllegalTransition(from: machine.state, to: .background)
        }
        _ = await fanOut(.willResignActive, to: ordered(.down), from: .active, to: .inactive)
        try move(to: .inactive)
        _ = await fanOut(.didEnterBackground, to: ordered(.down), from: .inactive, to: .background, before: { () throws(IllegalTransition) in
            try self.move(to: .background)
        })
        publishStatus()
        return true
    }

    private func goToForeground() async throws(IllegalTransition) -> Bool {
        switch machine.state {
        case .active: return false
        case .background: break
        default: throw IllegalTransition(from: machine.state, to: .active)
        }
        _ = await fanOut(.willEnterForeground, to: ordered(.up), from: .background, to: .inactive)
        try move(to: .inactive)
        _ = await fanOut(.didBecomeActive, to: ordered(.up), from: .inactive, to: .active, before: { () throws(IllegalTransition) in
            try self.move(to: .active)
        })
        publishStatus()
        return true
    }

    func terminateServices() async {
        guard machine.state.isRunning else { return }
        try? move(to: .terminating)
        publishStatus()
        let start = ContinuousClock.now
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        for slot in ordered(.down) where slot.isEnabled {
            let result = await deliverWillTerminate(to: slot)
            note([result], for: .willTerminate, slots: [slot], overruns: &overruns, failures: &failures)
            slot.stop()
            observer.didProgress(.terminating, slot.name, configuration.terminateDeadline)
        }
        bus.publish(LifecycleEventRecord(event: .willTerminate, from: .terminating, to: .notRunning, duration: ContinuousClock.now - start, overruns: overruns, failures: failures, serviceCount: slots.count))
        if let directory = configuration.stateDirectory {
            do {
                try LaunchStateStore(directory: directory).markCleanExit()
            } catch {
                logger.error("could not record the clean exit", metadata: ["error": "\(error)"])
            }
        }
        try? move(to: .notRunning)
        publishStatus()
        runLoopRequests?.finish()
    }

    /// `willTerminate` to one service under the terminate deadline. A service still inside an
    /// earlier (overrunning) hook gets it queued behind that hook, and the host waits for it
    /// within the same deadline instead of moving on: otherwise it would exit (or, on reload,
    /// start the replacement) before that service had its last call, out of reverse order.
    func deliverWillTerminate(to slot: ServiceSlot) async -> HookResult {
        let deadline = configuration.terminateDeadline
        let start = ContinuousClock.now
        let result = await FanOut(slots: [slot], deadline: { _ in deadline }) { service, application in
            try await service.applicationWillTerminate(application)
            return true
        }.run()[0]
        guard result == .deferred else { return result }
        logger.debug("\(slot.name) is still in an earlier hook; waiting for its applicationWillTerminate", metadata: ["service": "\(slot.name)"])
        let idle = await slot.waitUntilIdle(timeout: deadline - (ContinuousClock.now - start))
        return idle ? .returned(true) : .overran(deadline)
    }

    // MARK: Fan-out

    /// Delivers `event` to `slots` in the given order, after running `before` (which moves the
    /// state), and reports overruns and errors. Returns one result per slot.
    @discardableResult
    func fanOut(
        _ event: LifecycleEvent,
        to slots: [ServiceSlot],
        from: ApplicationState? = nil,
        to target: ApplicationState? = nil,
        before: () throws(IllegalTransition) -> Void = {}
    ) async -> [HookResult] {
        let from = from ?? machine.state
        do {
            try before()
        } catch {
            logger.critical("lifecycle bug: \(error)")
            return []
        }
        let start = ContinuousClock.now
        let hook = Self.hook(for: event)
        let results = await FanOut(slots: slots, deadline: { $0.hookDeadline }, hook: hook).run()
        var overruns: [Overrun] = []
        var failures: [String: String] = [:]
        note(results, for: event, slots: slots, overruns: &overruns, failures: &failures)
        bus.publish(LifecycleEventRecord(
            event: event, from: from, to: target ?? machine.state, duration: ContinuousClock.now - start,
            overruns: overruns, failures: failures, serviceCount: slots.count
        ))
        return results
    }

    /// Logs and records what went wrong in a fan-out.
    func note(_ results: [HookResult], for event: LifecycleEvent, slots: [ServiceSlot], overruns: inout [Overrun], failures: inout [String: String]) {
        for (slot, result) in zip(slots, results) {
            switch result {
            case .returned, .skipped, .abandoned:
                continue
            case .deferred:
                logger.warning("\(slot.name) is still in an earlier hook; \(event.hookName) queued behind it", metadata: ["service": "\(slot.name)", "event": "\(event.name)"])
            case .threw(let error):
                failures[slot.name] = error
                slot.recordError(error)
                logger.error("\(slot.name) threw in \(event.hookName): \(error)", metadata: ["service": "\(slot.name)", "event": "\(event.name)"])
            case .overran(let deadline):
                let overrun = Overrun(service: slot.name, hook: event.hookName, deadline: deadline)
                overruns.append(overrun)
                slot.recordOverrun(overrun)
                lastOverrun = overrun
                logger.warning("\(overrun)", metadata: ["service": "\(slot.name)", "event": "\(event.name)", "deadline": "\(deadline.configText)"])
            }
        }
        if !overruns.isEmpty { publishStatus() }
    }

    static func hook(for event: LifecycleEvent) -> FanOut.Hook {
        switch event {
        case .didBecomeActive: { try await $0.applicationDidBecomeActive($1); return true }
        case .willResignActive: { try await $0.applicationWillResignActive($1); return true }
        case .didEnterBackground: { try await $0.applicationDidEnterBackground($1); return true }
        case .willEnterForeground: { try await $0.applicationWillEnterForeground($1); return true }
        case .didReceiveMemoryWarning(let level): { try await $0.applicationDidReceiveMemoryWarning($1, level: level); return true }
        case .protectedDataWillBecomeUnavailable: { try await $0.applicationProtectedDataWillBecomeUnavailable($1); return true }
        case .protectedDataDidBecomeAvailable: { try await $0.applicationProtectedDataDidBecomeAvailable($1); return true }
        case .willTerminate: { try await $0.applicationWillTerminate($1); return true }
        case .willFinishLaunching, .didFinishLaunching, .didUpdateConfiguration:
            preconditionFailure("\(event) carries arguments; the host builds its hook where it sends it")
        }
    }

    func publishStatus() {
        let current = status
        guard current != lastPublishedStatus else { return }
        lastPublishedStatus = current
        observer.statusDidChange(current)
    }
}

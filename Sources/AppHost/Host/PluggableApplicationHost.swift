import CoreMetrics
import Logging
import ServiceContextModule
import Synchronization

/// Hosts application services and drives them through the UIKit-style lifecycle.
///
/// `run()` launches the services and then serves requests (background, foreground, memory
/// warning, session lock, reload, terminate) one at a time in arrival order, except terminate,
/// which never waits behind queued requests. Going-up events reach services in registration
/// order, going-down events in reverse; every service is asked, each under a deadline. Run it
/// alone or as a `Service` in a swift-service-lifecycle `ServiceGroup`.
public final class PluggableApplicationHost: Sendable {
    /// Host-wide settings.
    public struct Configuration: Sendable {
        /// Default deadline of a lifecycle hook.
        public var hookDeadline: Duration
        /// Default deadline of each launch step (`willFinishLaunching`, `didFinishLaunching`).
        public var launchDeadline: Duration
        /// Deadline of `applicationWillTerminate`.
        public var terminateDeadline: Duration
        /// Where launch state is kept; nil makes every launch a first launch.
        public var launchState: (any LaunchStateStorage)?
        /// Where the host keeps its services' restorable state and its lifecycle across runs;
        /// nil restores nothing.
        public var restorableState: (any RestorableStateStorage)?
        /// The directory services keep their files in (`ApplicationHandle.stateDirectory`).
        public var stateDirectory: String?
        /// Called after a memory warning reached every service; the daemon passes `malloc_trim`.
        public var trimHeap: (@Sendable (MemoryWarningLevel) -> Void)?
        /// How long a required service may stay inside one hook before the host counts as
        /// unhealthy (`HostStatus.healthProblem`; the daemon's watchdog then stops and triggers).
        /// nil: three times the service's hook deadline. Never shorter than that deadline.
        public var stallLimit: Duration?
        /// Where the host records its figures (`apphost_state`, `apphost_hook_duration_seconds`,
        /// …) and where `ApplicationHandle.metricsFactory` points services; nil: swift-metrics'
        /// global `MetricsSystem.factory` (a no-op until the program bootstraps one).
        public var metricsFactory: (any MetricsFactory)?

        /// Settings with the given values.
        public init(
            hookDeadline: Duration = .seconds(5),
            launchDeadline: Duration = .seconds(30),
            terminateDeadline: Duration = .seconds(10),
            launchState: (any LaunchStateStorage)? = nil,
            restorableState: (any RestorableStateStorage)? = nil,
            stateDirectory: String? = nil,
            trimHeap: (@Sendable (MemoryWarningLevel) -> Void)? = nil,
            stallLimit: Duration? = nil,
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.hookDeadline = hookDeadline
            self.launchDeadline = launchDeadline
            self.terminateDeadline = terminateDeadline
            self.launchState = launchState
            self.restorableState = restorableState
            self.stateDirectory = stateDirectory
            self.trimHeap = trimHeap
            self.stallLimit = stallLimit
            self.metricsFactory = metricsFactory
        }
    }

    /// The bus services talk through.
    public let bus: MessageBus
    /// The values services share by key (`ApplicationHandle.sharedState(_:)`); set one here to
    /// seed the host before it runs.
    public let sharedState = SharedStateStore()
    let configuration: Configuration
    let logger: Logger
    let services: [ServiceDescriptor]
    let inputs: AsyncStream<HostInput>
    /// What the loop publishes and the services hand it.
    let outlet: HostOutlet
    var input: AsyncStream<HostInput>.Continuation { outlet.input }
    var metrics: HostMetrics { outlet.metrics }

    /// A host for `services`, in registration order.
    /// - Throws: `InvalidConfiguration`, one for each service whose name an earlier one has.
    public init(
        services: [ServiceDescriptor],
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "apphost"),
        bus: MessageBus = MessageBus()
    ) throws(InvalidConfiguration) {
        try Self.checkServices(services)
        self.services = services
        self.configuration = configuration
        self.logger = logger
        self.bus = bus
        let (inputs, input) = AsyncStream<HostInput>.makeStream(bufferingPolicy: .unbounded)
        self.inputs = inputs
        let status = HostStatus(
            state: .notRunning,
            services: services.flatMap { $0.leaves() }.map { ServiceHealth(name: $0.name, isRequired: $0.isRequired, type: $0.type, condition: .healthy) }
        )
        let outlet = HostOutlet(status: status, input: input, metrics: HostMetrics(factory: configuration.metricsFactory ?? MetricsSystem.factory))
        self.outlet = outlet
        if configuration.restorableState != nil {
            sharedState.whenRestorableChanges { [weak outlet] in outlet?.nudgeRestorableState() }
        }
    }

    /// Every composite's problems and every duplicate path, at once.
    static func checkServices(_ services: [ServiceDescriptor]) throws(InvalidConfiguration) {
        var seen: Set<String> = []
        var problems: [ConfigurationError] = []
        for (index, descriptor) in services.enumerated() {
            problems += descriptor.compositeProblems(keyPath: "services[\(index)]")
            for leaf in descriptor.leaves(path: nil) where !seen.insert(leaf.name).inserted {
                problems.append(ConfigurationError(
                    file: descriptor.configuration.file, keyPath: "services[\(index)].name",
                    message: "duplicate service name \"\(leaf.name)\"",
                    hint: "give each instance its own name"
                ))
            }
        }
        if let errors = InvalidConfiguration(problems) { throw errors }
    }

    /// The current lifecycle state.
    public var state: ApplicationState { outlet.published.withLock { $0.status.state } }

    /// The host's status: state, per-service health, last overrun, session lock.
    public var status: HostStatus { outlet.published.withLock { $0.status } }

    /// The hook a service is inside now, and since when: the call the loop waits for, else the
    /// first service still inside a hook past its deadline; nil when no hook runs. What an edge
    /// names when it cannot wait any longer (logind's sleep).
    package var hookInProgress: (service: String, hook: String, since: ContinuousClock.Instant)? {
        let (run, status) = outlet.published.withLock { ($0.run, $0.status) }
        if let current = run?.callInProgress() { return current }
        for service in status.services {
            if let hook = service.busyHook, let since = service.busySince { return (service.name, hook, since) }
        }
        return nil
    }

    /// Where the host's figures go: the configuration's factory, else swift-metrics' global one.
    /// The edge's own figures (logind's) go there too.
    package var metricsFactory: any MetricsFactory { metrics.factory }

    /// Calls `observer` with the status each request ends with, when it changed (one call per
    /// request, on the host's loop: keep it short, hand the work elsewhere). What Host1's
    /// `PropertiesChanged` follows. Returns the token `stopObservingStatusChanges(_:)` takes.
    package func observeStatusChanges(_ observer: @escaping @Sendable (HostStatus) -> Void) -> Int {
        outlet.observe(observer)
    }

    /// Stops the observer `token` names.
    package func stopObservingStatusChanges(_ token: Int) {
        outlet.stopObserving(token)
    }

    /// Services in registration order, by instance name.
    public var serviceNames: [String] { outlet.published.withLock { $0.status.services.map(\.name) } }

    /// What the host reports, in order, for one consumer (the sd_notify reporter). Take it before
    /// `run()`: reports made while nobody holds the stream are not kept. Taking it again ends the
    /// stream taken before.
    public var reports: AsyncStream<HostReport> {
        let (stream, continuation) = AsyncStream<HostReport>.makeStream(bufferingPolicy: .unbounded)
        outlet.published.withLock { $0.reports }?.finish()
        outlet.published.withLock { $0.reports = continuation }
        return stream
    }

    // MARK: Requests

    /// Moves `active → inactive → background`: `willResignActive`, then `didEnterBackground`;
    /// either way the restorable state is then handed to storage to be written to disk. Returns
    /// false (and emits nothing) when already in the background.
    ///
    /// `cause` says why the machine asked (`sleep`, `shutdown`: `ServiceContext.hostRequestCause`);
    /// it shows in the status, the event records and the request's log lines.
    @discardableResult
    public func enterBackground(cause: String? = nil) async throws(IllegalTransition) -> Bool {
        try await send(cause: cause) { .lifecycle(.enterBackground, reply: $0) }.get() != nil
    }

    /// Moves `background → inactive → active`: `willEnterForeground`, then `didBecomeActive`.
    /// Returns false (and emits nothing) when already active. `cause` as for `enterBackground`
    /// (`resume`).
    @discardableResult
    public func enterForeground(cause: String? = nil) async throws(IllegalTransition) -> Bool {
        try await send(cause: cause) { .lifecycle(.enterForeground, reply: $0) }.get() != nil
    }

    /// Background when active, foreground when in the background (what SIGUSR1 does). Returns
    /// the new state.
    @discardableResult
    public func toggleBackground() async throws(IllegalTransition) -> ApplicationState {
        try await send { .lifecycle(.toggleBackground, reply: $0) }.get() ?? state
    }

    /// Tells every service (registration order) and then trims the heap. Warnings that arrive
    /// while one waits behind another request merge into it, at the higher level: one fan-out
    /// answers them all.
    public func receiveMemoryWarning(level: MemoryWarningLevel) async throws(IllegalTransition) {
        try await send { .memoryWarning(level, replies: [$0]) }.get()
    }

    /// Tells every service (registration order) that the time changed under it: UIKit's
    /// `applicationSignificantTimeChange`. `change` is the request's cause, which the hooks read
    /// (`ServiceContext.significantTimeChange`) and the status, the log and the event records
    /// show. Changes that arrive while one waits behind another request merge into it, their
    /// causes combined. Refused outside the running states.
    public func receiveSignificantTimeChange(_ change: SignificantTimeChange) async throws(IllegalTransition) {
        try await send(cause: change.description) { .significantTimeChange(replies: [$0]) }.get()
    }

    /// Keeps `path` as the network path and, when it differs from the one kept, tells every
    /// service (`applicationNetworkDidChange`, cause `network`). A newer path replaces one that
    /// waits behind another request. Before the launch it is kept for the services to read.
    public func updateNetworkPath(_ path: NetworkPath) async {
        _ = await send(cause: "network") { .networkPath(path, replies: [$0]) }
    }

    /// Keeps `state` as the power state and, when it differs, tells every service
    /// (`applicationPowerStateDidChange`, cause `power`), as `updateNetworkPath(_:)` does.
    public func updatePowerState(_ state: PowerState) async {
        _ = await send(cause: "power") { .powerState(state, replies: [$0]) }
    }

    /// Locks or unlocks the session: `protectedDataWillBecomeUnavailable` (reverse order) or
    /// `protectedDataDidBecomeAvailable` (registration order). Returns false when nothing changed.
    /// `reason` shows in the status while the session stays locked.
    ///
    /// A service locks the session by publishing `SessionLockDidChange` on the bus; published
    /// from a hook, the change is applied within the request that called the hook.
    @discardableResult
    public func setSessionLocked(_ locked: Bool, reason: String? = nil) async throws(IllegalTransition) -> Bool {
        try await send { .sessionLock(locked: locked, reason: reason, reply: $0) }.get()
    }

    /// Applies a new service list as one transaction (see `reload(loading:)`).
    @discardableResult
    public func reload(_ services: [ServiceDescriptor]) async throws(InvalidConfiguration) -> ConfigurationDidReload {
        try await reload { services }
    }

    /// Reloads as one transaction: reports `reloading`, calls `load` on the host's loop (after
    /// every request before it), checks and builds everything the new list needs, and only then
    /// applies the difference — removed services terminate (reverse order), changed ones are told
    /// through `didUpdateConfiguration` or restarted, added ones launch and are brought to the
    /// current state. Any error before the apply keeps the running services as they were, shows
    /// in the status as `reload failed: …` and is published as `ConfigurationReloadDidFail`.
    /// `load` may throw `InvalidConfiguration` to report every problem of a file at once.
    /// Ends with `ready`. A reload that arrives after terminate is dropped.
    @discardableResult
    public func reload(loading load: @escaping @Sendable () throws -> [ServiceDescriptor]) async throws(InvalidConfiguration) -> ConfigurationDidReload {
        try await send { .reload(load: load, reply: $0) }.get()
    }

    /// Sets a remark shown in the status until the next successful reload.
    public func setNote(_ text: String?) async {
        _ = await send { .note(text, reply: $0) }
    }

    /// Runs `body` on the host's loop, after every request that arrived before it. The watchdog
    /// pings this way, so a host whose loop is stuck stops pinging.
    public func onLoop(_ body: @escaping @Sendable () -> Void) async {
        _ = await send { .barrier(body, reply: $0) }
    }

    /// Waits until the launch that `run()` performs has finished and returns its options.
    /// - Throws: `LaunchFailure` when the launch failed or was terminated.
    @discardableResult
    public func launched() async throws(LaunchFailure) -> LaunchOptions {
        try await send { .launched(reply: $0) }.get()
    }

    /// Returns once the host terminated: every service got its last call (or its deadline
    /// passed). `run()` returns later only if a hook still runs then, when it returns.
    public func terminated() async {
        _ = await send { .terminated(reply: $0) }
    }

    /// Terminates: `willTerminate` to every service in reverse order, then `notRunning`; `run()`
    /// returns. Requests still queued are dropped and logged. During launch the host stops
    /// waiting for the hook in progress, rolls back the services already launched, and `run()`
    /// throws `LaunchFailure` with reason `.terminated`. Returns when terminate is done; a call
    /// after it, or before `run()`, returns at once.
    public func terminate(reason: String = "terminate requested") async {
        _ = await send { .terminate(reason: reason, reply: $0) }
    }

    func send<Success: Sendable, Failure: Error>(cause: String? = nil, _ make: (Reply<Success, Failure>) -> HostRequest) async -> Result<Success, Failure> {
        await withCheckedContinuation { continuation in
            let request = make(continuation)
            // The caller's context, so an embedding program's own request id (and trace) reaches
            // the hooks; a new request id when it has none.
            var context = ServiceContext.forRequest(ServiceContext.current)
            if let cause { context.hostRequestCause = cause }
            if case .terminated = input.yield(.request(request, context: context)) {
                // The run is over: the machine in the state it ended in refuses.
                let (state, launch) = outlet.published.withLock { ($0.status.state, $0.launch) }
                request.refuse(by: LifecycleStateMachine(state: state), launch: launch)
            }
        }
    }
}

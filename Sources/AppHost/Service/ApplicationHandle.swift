import CoreMetrics
import Logging

/// What a service's hook is handed: the service's own name, settings and logger, the bus, and
/// the host's state when the call was made — nothing that would let it reach another service.
///
/// It plays the part of `UIApplication` in a `UIApplicationDelegate` hook. Each hook gets a fresh
/// value; the one `run(_:)` gets describes the host when the run loop started.
public struct ApplicationHandle: Sendable {
    /// What stays the same for every call to one service instance: the host builds it once per
    /// instance (again when its settings change), so a hook call copies one reference.
    package final class Context: Sendable {
        let serviceName: String
        let logger: Logger
        let configuration: ServiceSection
        let bus: MessageBus
        let launchOptions: LaunchOptions?
        let stateDirectory: String?
        let keepRestorableState: (@Sendable ([UInt8]) -> Void)?
        let reportHealth: (@Sendable (String?) -> Void)?
        let metrics: ServiceMetrics
        let sharedState: SharedStateStore

        init(
            serviceName: String,
            logger: Logger,
            configuration: ServiceSection,
            bus: MessageBus,
            launchOptions: LaunchOptions?,
            stateDirectory: String?,
            keepRestorableState: (@Sendable ([UInt8]) -> Void)?,
            reportHealth: (@Sendable (String?) -> Void)? = nil,
            metrics: ServiceMetrics,
            sharedState: SharedStateStore = SharedStateStore()
        ) {
            self.metrics = metrics
            self.sharedState = sharedState
            self.serviceName = serviceName
            self.logger = logger
            self.configuration = configuration
            self.bus = bus
            self.launchOptions = launchOptions
            self.stateDirectory = stateDirectory
            self.keepRestorableState = keepRestorableState
            self.reportHealth = reportHealth
        }

        /// The same context with other settings (a reload's `didUpdateConfiguration`).
        func with(configuration: ServiceSection) -> Context {
            Context(
                serviceName: serviceName, logger: logger, configuration: configuration, bus: bus,
                launchOptions: launchOptions, stateDirectory: stateDirectory, keepRestorableState: keepRestorableState,
                reportHealth: reportHealth, metrics: metrics, sharedState: sharedState
            )
        }
    }

    let context: Context
    /// The host's lifecycle state when this call was made.
    public let state: ApplicationState
    /// True while the session is locked (protected data unavailable).
    public let isSessionLocked: Bool
    /// How many services the host runs, this one included: the count a fan-out to all of them
    /// puts in its `LifecycleEventRecord`.
    public let serviceCount: Int

    /// This service's instance name from the config (`logger`, `analytics`, `nightly-backup`).
    public var serviceName: String { context.serviceName }
    /// A logger labelled with the service's name.
    public var logger: Logger { context.logger }
    /// This service's own settings section.
    public var configuration: ServiceSection { context.configuration }
    /// The bus that services talk through.
    public var bus: MessageBus { context.bus }
    /// How this run was launched; `nil` before the launch began.
    public var launchOptions: LaunchOptions? { context.launchOptions }
    /// The state directory the host keeps its files in, if it has one.
    public var stateDirectory: String? { context.stateDirectory }
    /// Where this host records figures: pass it to swift-metrics (`Counter(label:dimensions:
    /// factory:)`) so a service's own figures go where the host's go (in the daemon, the
    /// Prometheus textfile) and a test's host keeps them apart.
    public var metricsFactory: any MetricsFactory { context.metrics.factory }

    /// A handle on `context` with the host's state now.
    package init(context: Context, state: ApplicationState, isSessionLocked: Bool, serviceCount: Int) {
        self.context = context
        self.state = state
        self.isSessionLocked = isSessionLocked
        self.serviceCount = serviceCount
    }

    /// A handle with the given values (tests and the test kit; the host shares one context).
    package init(
        serviceName: String,
        logger: Logger,
        configuration: ServiceSection,
        bus: MessageBus,
        state: ApplicationState,
        launchOptions: LaunchOptions?,
        isSessionLocked: Bool,
        stateDirectory: String?,
        serviceCount: Int,
        keepRestorableState: (@Sendable ([UInt8]) -> Void)? = nil,
        reportHealth: (@Sendable (String?) -> Void)? = nil,
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.init(
            context: Context(
                serviceName: serviceName, logger: logger, configuration: configuration, bus: bus,
                launchOptions: launchOptions, stateDirectory: stateDirectory, keepRestorableState: keepRestorableState,
                reportHealth: reportHealth,
                metrics: ServiceMetrics(serviceName: serviceName, factory: metricsFactory ?? MetricsSystem.factory)
            ),
            state: state,
            isSessionLocked: isSessionLocked,
            serviceCount: serviceCount
        )
    }

    /// Hands the host bytes to give back at this service's next launch, in
    /// `LaunchOptions.restoredState`, replacing what it kept before: how a service survives a
    /// crash, a SIGKILL or a restart with its state. Call it from a hook (the host keeps the
    /// bytes before that request's `STATUS=`) or from `run(_:)` whenever the state changes.
    /// `applicationDidEnterBackground`, `applicationDidReceiveMemoryWarning` and
    /// `applicationWillTerminate` are the moments the host also writes them to disk. Never
    /// secrets: the bytes outlive the process in memory and in a file. Without a restorable-state
    /// storage (see `PluggableApplicationHost.Configuration`) they are dropped.
    public func keepRestorableState(_ bytes: [UInt8]) {
        context.keepRestorableState?(bytes)
    }

    /// Says this service cannot do its work (`reason`: what is wrong, one line), until
    /// `reportHealthy()`. A required service that says so makes the host unhealthy: `STATUS=`
    /// names it and the reason, and under systemd with `WatchdogSec=` the daemon stops its
    /// watchdog pings and sends `WATCHDOG=trigger`, so systemd applies the unit's watchdog action
    /// (a restart, with `Restart=on-failure`) at once. An optional service's report shows in
    /// `STATUS=` only. Cheap: saying the same again wakes nothing, so call it whenever the
    /// service looks.
    public func reportUnhealthy(_ reason: String) {
        context.reportHealth?(String(reason.prefix(200)))
    }

    /// Withdraws `reportUnhealthy(_:)`: the service can do its work again.
    public func reportHealthy() {
        context.reportHealth?(nil)
    }
}

extension ApplicationHandle {
    /// The network path now (not when the call was made): what the host's source last
    /// reported, `NetworkPath.unknown` without one.
    public var networkPath: NetworkPath {
        context.sharedState[NetworkPathKey.self]
    }

    /// The power state now (not when the call was made): what the host's sources last
    /// reported, `PowerState.unknown` without them.
    public var powerState: PowerState {
        context.sharedState[PowerStateKey.self]
    }

    /// The value the host keeps under `key`: the last one any service set, else its default.
    public func sharedState<Key: SharedStateKey>(_ key: Key.Type) -> Key.Value {
        context.sharedState[key]
    }

    /// Sets the value under `key` and publishes `SharedStateDidChange<Key>` on the bus, so every
    /// service that observes it learns of the change (within this request: its id travels).
    public func setSharedState<Key: SharedStateKey>(_ key: Key.Type, to value: Key.Value) {
        context.sharedState.set(key, to: value)
        bus.publish(SharedStateDidChange<Key>(value: value, service: serviceName))
    }
}

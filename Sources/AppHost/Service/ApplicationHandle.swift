import Logging

/// What a service's hook is handed: the service's own name, settings and logger, the bus, and
/// the host's state when the call was made — nothing that would let it reach another service.
///
/// It plays the part of `UIApplication` in a `UIApplicationDelegate` hook. Each hook gets a fresh
/// value; the one `run(_:)` gets describes the host when the run loop started.
public struct ApplicationHandle: Sendable {
    /// This service's instance name from the config (`logger`, `analytics`, `nightly-backup`).
    public let serviceName: String
    /// A logger labelled with the service's name.
    public let logger: Logger
    /// This service's own settings section.
    public let configuration: ServiceConfiguration
    /// The bus that services talk through.
    public let bus: MessageBus
    /// The host's lifecycle state when this call was made.
    public let state: ApplicationState
    /// How this run was launched; `nil` before the launch began.
    public let launchOptions: LaunchOptions?
    /// True while the session is locked (protected data unavailable).
    public let isSessionLocked: Bool
    /// The state directory the host keeps its files in, if it has one.
    public let stateDirectory: String?
    /// How many services the host runs, this one included: the count a fan-out to all of them
    /// puts in its `LifecycleEventRecord`.
    public let serviceCount: Int
    let restorableStateSink: (@Sendable (String, [UInt8]) -> Void)?

    /// A handle with the given values; the host builds one for every hook call.
    package init(
        serviceName: String,
        logger: Logger,
        configuration: ServiceConfiguration,
        bus: MessageBus,
        state: ApplicationState,
        launchOptions: LaunchOptions?,
        isSessionLocked: Bool,
        stateDirectory: String?,
        serviceCount: Int,
        restorableStateSink: (@Sendable (String, [UInt8]) -> Void)? = nil
    ) {
        self.serviceName = serviceName
        self.logger = logger
        self.configuration = configuration
        self.bus = bus
        self.state = state
        self.launchOptions = launchOptions
        self.isSessionLocked = isSessionLocked
        self.stateDirectory = stateDirectory
        self.serviceCount = serviceCount
        self.restorableStateSink = restorableStateSink
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
        restorableStateSink?(serviceName, bytes)
    }
}

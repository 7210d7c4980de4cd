import AppHost
import Logging
import ServiceContextModule
import Synchronization

/// Usage analytics in the spirit of a usage broker: launches (first, after clean and unclean
/// exits), foreground and background time, transitions, memory warnings by level, reloads,
/// session locks, restarts by service, and time offline, in low power mode and on battery, kept
/// crash-safely in `<stateDirectory>/analytics`.
///
/// ```yaml
/// - name: analytics
///   settings:
///     flush-interval: 60s     # flush pending events this often, only when there are some
///     low-power-flush-interval: 4m   # the same in low power mode (default: 4 × flush-interval)
///     compact-after: 64KiB    # fold the event log into summary.json past this size
/// ```
///
/// Events are counted in memory and flushed (one append, then fsync) on
/// `applicationDidEnterBackground`, `applicationWillTerminate`, memory warnings, right after
/// launch, and every `flush-interval` while something is pending; when idle it waits without
/// waking up. A clean terminate also folds the log into `summary.json`, so a launch after it
/// reads no records. What is not flushed yet is the service's restorable state, so a SIGKILL or a
/// crash loses no event: the next launch takes it back (counting each event once).
/// `apphostd analytics` prints the report (`AnalyticsReport`).
public final class AnalyticsService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "analytics"
    /// The keys its `settings:` section may hold.
    public static let settingKeys = ["flush-interval", "low-power-flush-interval", "compact-after"]
    /// One line for `apphostd services`.
    public static let summary = "Usage analytics: launches, exits by cause, foreground/background time, transitions, memory warnings, restarts by service, sleeps, screen locks, time changes by cause, time offline, in low power mode and on battery; crash-safe log in the state directory"

    /// How analytics persists.
    public struct Settings: Sendable, Hashable {
        /// How long pending events may wait in memory.
        public var flushInterval: Duration
        /// Log size in bytes after which it is folded into the summary.
        public var compactAfter: Int
        /// How long pending events may wait in low power mode: longer, so the disk wakes less
        /// often, as Apple asks of apps then.
        public var lowPowerFlushInterval: Duration
    }

    enum Phase { case foreground, background }

    struct State {
        var settings: Settings
        var store: AnalyticsStore?
        var phase: Phase?
        var phaseStart = ContinuousClock.now
        var metrics: AnalyticsMetrics?
        /// The launch said it goes into the background: the `didEnterBackground` that follows is
        /// where the host is, not a transition, and is not counted as one.
        var launchesIntoBackground = false
        /// Since when each condition of the machine that analytics times has held.
        var conditionsSince: [TimedCondition: ContinuousClock.Instant] = [:]
    }

    let state: Mutex<State>
    /// Tells the flush timer that events are pending; it sleeps on this when there are none.
    let wakeups: AsyncStream<Void>
    let wake: AsyncStream<Void>.Continuation

    /// The settings in use now.
    public var currentSettings: Settings { state.withLock { $0.settings } }

    /// The totals so far, pending events included; nil before launch.
    public var report: AnalyticsReport? { state.withLock { $0.store?.report } }

    /// Builds the service from its settings section.
    public init(configuration: ServiceSection) throws(ConfigurationError) {
        state = Mutex(State(settings: try Self.parse(configuration)))
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Hooks

    public func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        guard let stateDirectory = application.stateDirectory else {
            throw AnalyticsStore.Failure(path: "-", reason: "analytics needs a state directory (host.state-directory)")
        }
        let (recovered, skipped, adopted, path) = try state.withLock { state throws(AnalyticsStore.Failure) in
            // The store is created under the lock: only the lock's holder ever touches it.
            let store = try AnalyticsStore(directory: AnalyticsReport.directory(stateDirectory: stateDirectory))
            state.store = store
            return (store.recoveredBytes, store.skippedRecords, options.restoredState.map(store.adoptUnflushed) ?? 0, store.logPath)
        }
        if recovered > 0 {
            application.logger.warning("analytics: dropped a torn or corrupt tail of \(recovered) bytes from \(path); earlier records kept", metadata: ["path": "\(path)"])
        }
        if skipped > 0 {
            application.logger.notice("analytics: \(skipped.counted("record")) in \(path) \(skipped == 1 ? "is of a kind" : "are of kinds") a newer apphostd wrote; not counted, and gone at the next compaction", metadata: ["path": "\(path)"])
        }
        if adopted > 0 {
            application.logger.notice("analytics: took back \(adopted.counted("event")) the previous run had not flushed")
        }
        return true
    }

    public func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        // The run loop flushes this right after launch, off the readiness path.
        record(.launch, first: options.isFirstLaunch, previousExit: options.previousExit.rawValue, exitCause: options.previousExitCause?.description)
        let metrics = AnalyticsMetrics(factory: application.metricsFactory)
        if let report = state.withLock({ state in
            state.metrics = metrics
            state.launchesIntoBackground = options.launchesIntoBackground
            return state.store?.report
        }) {
            metrics.show(report)
        }
        updateConditions(application)
        return true
    }

    public func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {
        state.withLock { state in
            closePhase(&state)
            state.launchesIntoBackground = false
            state.phase = .foreground
            state.phaseStart = .now
        }
        keepUnflushed(application)
    }

    public func applicationWillResignActive(_ application: ApplicationHandle) async throws {
        state.withLock { closePhase(&$0) }
        keepUnflushed(application)
    }

    public func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        state.withLock { state in
            closePhase(&state)
            if state.launchesIntoBackground {
                state.launchesIntoBackground = false
            } else {
                _ = state.store?.record(.background)
                state.metrics?.backgroundEntries.increment()
            }
            state.phase = .background
            state.phaseStart = .now
            bankConditions(&state)
        }
        defer { keepUnflushed(application) }
        try flush(reportingTo: application.logger)
    }

    public func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
        state.withLock { state in
            closePhase(&state)
            _ = state.store?.record(.foreground)
            state.metrics?.foregroundEntries.increment()
        }
        keepUnflushed(application)
    }

    public func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws {
        state.withLock { state in
            _ = state.store?.record(.memoryWarning, level: level.rawValue)
            // Bank the time so far, so a kill under pressure loses little of it.
            let phase = state.phase
            closePhase(&state)
            state.phase = phase
            state.phaseStart = .now
            bankConditions(&state)
        }
        defer { keepUnflushed(application) }
        try flush(reportingTo: application.logger)
    }

    public func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {
        record(.timeChange, cause: ServiceContext.current?.significantTimeChange?.description)
        keepUnflushed(application)
    }

    public func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        updateConditions(application)
    }

    public func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {
        updateConditions(application)
    }

    public func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        record(.sessionLock)
        keepUnflushed(application)
    }

    public func applicationWillTerminate(_ application: ApplicationHandle) async throws {
        // Rollback or removal by a reload is not a termination of the application.
        let isTerminating = application.state == .terminating
        let didLaunch = state.withLock { state -> Bool in
            closePhase(&state)
            bankConditions(&state, ending: true)
            guard let store = state.store else { return false }
            if isTerminating { _ = store.record(.terminate) }
            return true
        }
        guard didLaunch else { return }
        defer { keepUnflushed(application) }
        // A clean stop folds the log, pending records included, into summary.json, so the next
        // launch reads the summary alone instead of parsing up to `compact-after` of records
        // before it is ready. Should that fail, the records are appended as at any flush.
        if !isTerminating || !foldLog(reportingTo: application.logger) {
            try flush(reportingTo: application.logger)
        }
        wake.finish()
    }

    public func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        let settings = try Self.parse(configuration)
        state.withLock { $0.settings = settings }
        return .applied
    }

    public func run(_ application: ApplicationHandle) async throws {
        // Subscribed in run, so that a run loop started again has subscriptions of its own.
        let (inputs, _) = application.bus.inputs { (bus: BusInputs<BusEvent>) in
            bus.relay(ConfigurationDidReload.self) { _ in .reload }
            bus.relay(ServiceDidRestart.self) { .restart($0.message.service) }
            bus.relay(MachineDidResume.self) { .sleep($0.message.asleep) }
            bus.relay(ScreenLockDidChange.self) { $0.message.isLocked ? .screenLock : nil }
        }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.flushPeriodically(application) }
            for await event in inputs {
                switch event {
                case .reload: record(.reload)
                case .restart(let service): record(.restart, service: service)
                case .sleep(let asleep): record(.sleep, seconds: Double(asleep.microseconds) / 1_000_000)
                case .screenLock: record(.screenLock)
                }
                keepUnflushed(application)
            }
            group.cancelAll()
        }
    }

    /// What the bus tells analytics to count.
    enum BusEvent: Sendable {
        case reload
        case restart(String)
        case sleep(Duration)
        case screenLock
    }
}

import AppHost
import Logging
import Synchronization

/// The audit trail of the lifecycle: one structured log record per event the host fans out,
/// with the states before and after, how long the fan-out took and who overran or failed.
///
/// ```yaml
/// - name: logger
///   settings:
///     level: info                                  # records are written at this level;
///                                                  # overruns and failures at warning or above
///     events: [didEnterBackground, willTerminate]  # default: every event
/// ```
///
/// Records come from the bus (`LifecycleEventRecord`), so they cover every service's hooks. Each
/// is written as the host publishes it, on the host's own task, so it lands in the log after the
/// hooks it describes and before the next event's hooks run: the log is in the order things
/// happened. The `willTerminate` record is written by this service's own
/// `applicationWillTerminate`: the host publishes that record only after every service was
/// terminated. Reload applies `level` and `events` live.
public final class LoggerService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "logger"
    /// The keys its `settings:` section may hold.
    public static let settingKeys = ["level", "events"]
    /// One line for `apphostd services`.
    public static let summary = "Audit trail: one structured log record per lifecycle event (states, duration, overruns, failures)"

    /// What the logger writes.
    public struct Settings: Sendable, Hashable {
        /// The level records are written at; records with overruns or failures use at least `warning`.
        public var level: Logger.Level
        /// Event names to record; nil records every event.
        public var events: Set<String>?

        /// Whether records of `event` are written.
        public func records(_ event: LifecycleEvent) -> Bool {
            guard let events else { return true }
            if events.contains(event.name) { return true }
            if case .didReceiveMemoryWarning = event { return events.contains("didReceiveMemoryWarning") }
            return false
        }
    }

    /// Event names `events` may list.
    static let eventNames = LifecycleEvent.allNames + ["didReceiveMemoryWarning"]

    private struct State {
        var settings: Settings
        /// Set by `applicationWillTerminate`, which writes the terminate record itself.
        var hasTerminated = false
    }

    private let state: Mutex<State>

    /// The settings in use now.
    public var currentSettings: Settings { state.withLock { $0.settings } }

    /// Builds the service from its settings section.
    public init(configuration: ServiceSection) throws(ConfigurationError) {
        state = Mutex(State(settings: try Self.parse(configuration)))
    }

    /// Validates a settings section strictly.
    public static func parse(_ configuration: ServiceSection) throws(ConfigurationError) -> Settings {
        try configuration.requireOnlyKeys(Self.settingKeys)
        let levels = Logger.Level.allCases.map(\.rawValue)
        let level = try configuration.choice("level", of: levels).flatMap(Logger.Level.init(rawValue:)) ?? .info
        var events: Set<String>?
        if let names = try configuration.strings("events") {
            for (index, name) in names.enumerated() where !eventNames.contains(name) {
                throw configuration.error("events[\(index)]", "unknown event \"\(name)\"", hint: "expected one of \(eventNames.joined(separator: ", "))")
            }
            events = Set(names)
        }
        return Settings(level: level, events: events)
    }

    // MARK: Hooks

    public func applicationWillTerminate(_ application: ApplicationHandle) async throws {
        let settings = state.withLock { state in
            state.hasTerminated = true
            return state.settings
        }
        let serviceCount = application.serviceCount
        guard application.state == .terminating else {
            application.logger.log(level: settings.level, "audit trail ends: \(application.serviceName) was removed by a reload")
            return
        }
        guard settings.records(.willTerminate) else { return }
        application.logger.log(
            level: settings.level,
            "willTerminate: \(application.state) → notRunning (\(Self.services(serviceCount)))",
            metadata: [
                "event": "willTerminate", "from_state": "\(application.state)", "to_state": "notRunning",
                "service_count": "\(serviceCount)",
            ]
        )
    }

    public func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        let settings = try Self.parse(configuration)
        state.withLock { $0.settings = settings }
        return .applied
    }

    /// Writes each record as the host publishes it, on the host's own task, for as long as the
    /// host runs this service's run loop: it starts before the launch record is published and
    /// ends when the service is retired (terminated, removed, or its launch failed), so no
    /// record is missed, written twice or written for a service the host dropped.
    public func run(_ application: ApplicationHandle) async throws {
        let logger = application.logger
        let observation = application.bus.observe(LifecycleEventRecord.self) { [self] record in
            let (settings, skip) = state.withLock { ($0.settings, record.event == .willTerminate && $0.hasTerminated) }
            guard !skip, settings.records(record.event) else { return }
            // Published on the host's task right after the fan-out: the value it told.
            let condition: (key: String, value: String)? = switch record.event {
            case .networkDidChange: ("network", "\(application.networkPath)")
            case .powerStateDidChange: ("power", "\(application.powerState)")
            default: nil
            }
            Self.write(record, at: settings.level, to: logger, condition: condition)
        }
        defer { application.bus.stopObserving(observation) }
        await parkUntilCancelled()
    }

    // MARK: Writing

    /// Logs one record: message for people, metadata for `journalctl -o json` and filters.
    /// `condition`: the network path or the power state a condition's event told.
    static func write(_ record: LifecycleEventRecord, at level: Logger.Level, to logger: Logger, condition: (key: String, value: String)? = nil) {
        let overran = record.overruns.map(\.service)
        let failed = record.failures.keys.sorted()
        let milliseconds = Double(record.duration.microseconds) / 1000
        var message = "\(record.event.name): \(record.from) → \(record.to) in \(milliseconds.decimalText(digits: 2)) ms (\(services(record.serviceCount)))"
        var metadata: Logger.Metadata = [
            "event": "\(record.event.name)", "from_state": "\(record.from)", "to_state": "\(record.to)",
            "duration_us": "\(record.duration.microseconds)", "service_count": "\(record.serviceCount)",
        ]
        // The record reaches this run loop after the request: its id travels with it.
        if let requestID = record.requestID { metadata["request_id"] = .string(requestID) }
        // Why the machine asked (logind's sleep, its resume): `journalctl CAUSE=sleep`.
        if let cause = record.cause {
            metadata["cause"] = .string(cause)
            message += "; cause: \(cause)"
        }
        if let condition {
            metadata[condition.key] = .string(condition.value)
            message += "; \(condition.key): \(condition.value)"
        }
        if !overran.isEmpty {
            message += "; overran: " + record.overruns.map { "\($0.service) (\($0.deadline.configText))" }.joined(separator: ", ")
            metadata["overran"] = .string(overran.joined(separator: ","))
        }
        if !failed.isEmpty {
            message += "; failed: " + failed.map { "\($0) (\(record.failures[$0] ?? ""))" }.joined(separator: ", ")
            metadata["failed"] = .string(failed.joined(separator: ","))
        }
        let effective = overran.isEmpty && failed.isEmpty ? level : max(level, .warning)
        logger.log(level: effective, "\(message)", metadata: metadata)
    }

    static func services(_ count: Int) -> String {
        count.counted("service")
    }
}

import AppHost
import AppHostSupport
import Logging
import ServiceContextModule
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs a configured program on chosen lifecycle events, so code in any language can plug in.
///
/// ```yaml
/// - name: backup-on-background
///   type: exec
///   settings:
///     on: [didEnterBackground, willTerminate]
///     run: ["/usr/local/bin/backup", "--quick"]   # argv; no shell is added
///     timeout: 5s                                # then SIGTERM, and SIGKILL 2s later
///     environment: { BACKUP_TARGET: /srv/backup } # optional, added to the daemon's environment
///     working-directory: /srv                    # optional
/// ```
///
/// The program gets `APPHOST_EVENT` (event name), `APPHOST_STATE`, `APPHOST_SERVICE` (this
/// instance's name) and `APPHOST_LAUNCH_COUNT`; on `significantTimeChange`, also
/// `APPHOST_TIME_CHANGE`, what changed (`clock`, `timezone`, `midnight`, `daylight-saving`,
/// comma-separated when several came together); and the machine's conditions now:
/// `APPHOST_NETWORK` (`available`, `unavailable`, `unknown`), `APPHOST_NETWORK_EXPENSIVE`,
/// `APPHOST_LOW_POWER` and `APPHOST_ON_BATTERY` (`1` or `0`). Its stdout lines are logged at info and its
/// stderr lines at warning, with `stream=stdout|stderr`; a non-zero exit is a warning. The hook
/// waits for the program, so keep the hook deadline above `timeout` plus 2s. Children start
/// with an empty signal mask and default dispositions (swift-subprocess does this), in a
/// session of their own whose whole process group the timeout kills. Output lines longer than
/// 128 KiB stop the logging of that stream (swift-subprocess's line limit); the timeout still
/// applies.
public final class ExecService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "exec"
    /// The keys its `settings:` section may hold.
    public static let settingKeys = ["on", "run", "timeout", "environment", "working-directory"]
    /// One line for `apphostd services`.
    public static let summary = "Runs a program (argv, no shell) on chosen lifecycle events, with a timeout and APPHOST_* environment"

    /// What to run, and when.
    public struct Settings: Sendable, Hashable {
        /// Event names that run the program; `didReceiveMemoryWarning` matches both levels.
        public var events: Set<String>
        /// The program and its arguments.
        public var arguments: [String]
        /// How long the program may run before SIGTERM.
        public var timeout: Duration
        /// How long after SIGTERM before SIGKILL.
        public var grace: Duration
        /// Extra environment variables.
        public var environment: [String: String]
        /// The directory the program starts in; the daemon's when nil.
        public var workingDirectory: String?

        /// Whether `event` runs the program.
        public func runs(on event: LifecycleEvent) -> Bool {
            if events.contains(event.name) { return true }
            if case .didReceiveMemoryWarning = event { return events.contains("didReceiveMemoryWarning") }
            return false
        }
    }

    /// How one run ended.
    public struct Outcome: Sendable, Hashable {
        /// The exit code, when the program exited.
        public var exitCode: Int32?
        /// The signal that ended it, when one did.
        public var signal: Int32?
        /// True when the timeout ended it.
        public var timedOut: Bool
    }

    /// A program that cannot be run, or a run that failed to start.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Event names `on` may list.
    static let eventNames = LifecycleEvent.allNames + ["didReceiveMemoryWarning"]

    private struct State {
        var settings: Settings
        var executable: String?
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
        guard let events = try configuration.strings("on"), !events.isEmpty else {
            throw configuration.error("on", "exec needs the events to run on", hint: "for example on: [didEnterBackground, willTerminate]")
        }
        for (index, name) in events.enumerated() where !eventNames.contains(name) {
            throw configuration.error("on[\(index)]", "unknown event \"\(name)\"", hint: "expected one of \(eventNames.joined(separator: ", "))")
        }
        guard let arguments = try configuration.strings("run"), let program = arguments.first, !program.isEmpty else {
            throw configuration.error("run", "exec needs a program to run", hint: "an argv list such as [\"/usr/bin/logger\", \"hello\"]; no shell is added")
        }
        if program.contains("/"), !program.hasPrefix("/") {
            throw configuration.error("run[0]", "\"\(program)\" is a relative path", hint: "give an absolute path or a bare name found on PATH")
        }
        let timeout = try configuration.duration("timeout") ?? .seconds(5)
        guard timeout > .zero else { throw configuration.error("timeout", "the timeout must be longer than zero") }
        var environment: [String: String] = [:]
        if let section = try configuration.section("environment") {
            for key in section.values.keys.sorted() {
                guard key.first.map({ $0 == "_" || $0.isLetter }) == true, key.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) else {
                    throw section.error(key, "\"\(key)\" is not a valid environment variable name")
                }
                guard !key.hasPrefix("APPHOST_") else {
                    throw section.error(key, "APPHOST_ variables are set by apphostd")
                }
                switch section.values[key] {
                case .string(let value)?: environment[key] = value
                case .int(let value)?: environment[key] = String(value)
                case .bool(let value)?: environment[key] = String(value)
                case .double(let value)?: environment[key] = String(value)
                case let other?: throw section.error(key, "expected a string, found \(other.typeName)")
                case nil: break
                }
            }
        }
        let workingDirectory = try configuration.string("working-directory")
        if let workingDirectory, !workingDirectory.hasPrefix("/") {
            throw configuration.error("working-directory", "\"\(workingDirectory)\" is not an absolute path")
        }
        return Settings(events: Set(events), arguments: arguments, timeout: timeout, grace: .seconds(2), environment: environment, workingDirectory: workingDirectory)
    }

    /// Finds `program` the way `execvp` would: an absolute path must be executable, a bare name
    /// is searched on `path`.
    public static func resolve(_ program: String, path: String? = ProcessEnvironment.current["PATH"]) throws(Failure) -> String {
        if program.hasPrefix("/") {
            guard access(program, X_OK) == 0 else {
                throw Failure(description: "program \(program) is missing or not executable: \(SystemErrorText.reason(errno))")
            }
            return program
        }
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + program
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        throw Failure(description: "program \"\(program)\" was not found on PATH (\(directories.joined(separator: ":")))")
    }

    // MARK: Hooks

    public func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        let settings = currentSettings
        try check(settings)
        try await runIfChosen(.willFinishLaunching, application)
        return true
    }

    public func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        try await runIfChosen(.didFinishLaunching, application)
        return true
    }

    public func applicationDidBecomeActive(_ application: ApplicationHandle) async throws { try await runIfChosen(.didBecomeActive, application) }
    public func applicationWillResignActive(_ application: ApplicationHandle) async throws { try await runIfChosen(.willResignActive, application) }
    public func applicationDidEnterBackground(_ application: ApplicationHandle) async throws { try await runIfChosen(.didEnterBackground, application) }
    public func applicationWillEnterForeground(_ application: ApplicationHandle) async throws { try await runIfChosen(.willEnterForeground, application) }
    public func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws {
        try await runIfChosen(.didReceiveMemoryWarning(level), application)
    }
    public func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {
        try await runIfChosen(.significantTimeChange, application)
    }
    public func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        try await runIfChosen(.networkDidChange, application)
    }
    public func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {
        try await runIfChosen(.powerStateDidChange, application)
    }
    public func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        try await runIfChosen(.protectedDataWillBecomeUnavailable, application)
    }
    public func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        try await runIfChosen(.protectedDataDidBecomeAvailable, application)
    }
    public func applicationWillTerminate(_ application: ApplicationHandle) async throws { try await runIfChosen(.willTerminate, application) }

    public func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        let settings = try Self.parse(configuration)
        try check(settings)
        try await runIfChosen(.didUpdateConfiguration, application)
        return .applied
    }

    /// Resolves the program and checks the working directory; stores the program's path.
    private func check(_ settings: Settings) throws {
        let executable = try Self.resolve(settings.arguments[0])
        if let directory = settings.workingDirectory {
            var status = stat()
            guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
                throw Failure(description: "working-directory \(directory) does not exist")
            }
        }
        state.withLock {
            $0.settings = settings
            $0.executable = executable
        }
    }

    private func runIfChosen(_ event: LifecycleEvent, _ application: ApplicationHandle) async throws {
        let (settings, executable) = state.withLock { ($0.settings, $0.executable) }
        guard settings.runs(on: event), let executable else { return }
        var apphost = [
            "APPHOST_EVENT": event.name,
            "APPHOST_STATE": application.state.rawValue,
            "APPHOST_SERVICE": application.serviceName,
            "APPHOST_LAUNCH_COUNT": String(application.launchOptions?.launchCount ?? 0),
            "APPHOST_NETWORK": application.networkPath.status.rawValue,
            "APPHOST_NETWORK_EXPENSIVE": application.networkPath.isExpensive ? "1" : "0",
            "APPHOST_LOW_POWER": application.powerState.isLowPowerModeEnabled ? "1" : "0",
            "APPHOST_ON_BATTERY": application.powerState.isOnBattery ? "1" : "0",
        ]
        if event == .significantTimeChange, let change = ServiceContext.current?.significantTimeChange {
            apphost["APPHOST_TIME_CHANGE"] = change.description
        }
        let environment = settings.environment.merging(apphost) { $1 }
        let outcome = try await Self.execute(executable: executable, settings: settings, environment: environment, logger: application.logger, event: event.name)
        var metadata: Logger.Metadata = ["event": "\(event.name)", "program": "\(settings.arguments[0])"]
        if outcome.timedOut {
            metadata["timeout"] = "\(settings.timeout.configText)"
            application.logger.warning("\(settings.arguments[0]) timed out after \(settings.timeout.configText) on \(event.name) and was terminated", metadata: metadata)
        } else if let code = outcome.exitCode, code != 0 {
            metadata["exit_code"] = "\(code)"
            application.logger.warning("\(settings.arguments[0]) exited with status \(code) on \(event.name)", metadata: metadata)
        } else if let signal = outcome.signal {
            metadata["signal"] = "\(signal)"
            application.logger.warning("\(settings.arguments[0]) was killed by signal \(signal) on \(event.name)", metadata: metadata)
        } else {
            application.logger.debug("\(settings.arguments[0]) finished on \(event.name)", metadata: metadata)
        }
    }
}

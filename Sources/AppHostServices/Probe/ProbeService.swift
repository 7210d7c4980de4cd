import AppHost
import AppHostSupport
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A diagnostic service: records every lifecycle hook it receives to a file (or the log) and can
/// misbehave on purpose, so operators and tests can drill deadlines, rollback and overruns.
///
/// ```yaml
/// - name: probe
///   type: probe
///   settings:
///     record-to: /tmp/x/probe.log    # "<instance-name> <event>\n" at the start of each hook
///     keep-state: 64                 # keep this many bytes of restorable state, new at each hook
///     faults:
///       - { hook: didEnterBackground, action: hang, duration: 10s }
///       - { hook: run, action: throw, after: 200ms }   # a supervision drill
/// ```
///
/// Without a `run` fault its run loop waits until the host stops it, so it runs again as often
/// as its `restart:` policy asks. With one, each start of the run loop is recorded as `run`,
/// then after `after` it throws or ends.
///
/// Each line is one `O_APPEND` write followed by `fsync`, so other processes can read it at once.
/// Settings changed on reload are applied live.
public final class ProbeService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "probe"
    /// The keys its `settings:` section may hold.
    public static let settingKeys = ["record-to", "keep-state", "faults"]
    /// One line for `apphostd services`.
    public static let summary = "Diagnostic: records every lifecycle hook to a file and can misbehave on purpose (deadline and rollback drills)"

    /// One deliberate misbehaviour.
    public struct Fault: Sendable, Hashable {
        /// What the hook does wrong.
        public enum Action: String, Sendable, Hashable, CaseIterable {
            /// Sleeps asynchronously (forever unless `duration`): an overrun that frees its thread.
            case hang
            /// Throws an error.
            case `throw`
            /// Returns false from a launch hook (or asks for a restart from `didUpdateConfiguration`).
            case refuse
            /// Blocks its thread with a synchronous sleep (forever unless `duration`).
            case block
            /// Ends the run loop without an error (`hook: run` only).
            case end
        }

        /// The event name it applies to; `didReceiveMemoryWarning` matches both levels.
        public var hook: String
        /// What to do.
        public var action: Action
        /// How long `hang` or `block` last; nil means forever.
        public var duration: Duration?
        /// How long the run loop runs before a `run` fault strikes; nil: at once.
        public var after: Duration?

        /// Whether this fault applies to `event`.
        public func matches(_ event: String) -> Bool {
            hook == event || (hook == "didReceiveMemoryWarning" && event.hasPrefix("didReceiveMemoryWarning."))
        }
    }

    /// The error a `throw` fault raises.
    public struct InjectedFault: Error, CustomStringConvertible, Sendable {
        /// The event whose hook threw.
        public let event: String
        public var description: String { "probe fault injected in \(event)" }
    }

    /// The record file could not be written.
    public struct RecordFailure: Error, CustomStringConvertible, Sendable {
        /// The failing call (`open`, `write`, `fsync`).
        public let operation: String
        /// The record file.
        public let path: String
        /// The errno value.
        public let code: Int32
        public var description: String { "probe: \(operation) \(path): \(SystemErrorText.reason(code))" }
    }

    /// The probe's settings.
    public struct Settings: Sendable, Hashable {
        /// The file lines are appended to; nil logs them instead.
        public var recordTo: String?
        /// Bytes of restorable state kept at every hook (0: none), so benchmarks and drills
        /// measure services that hold state.
        public var keepState: Int = 0
        /// Faults, applied in order when their hook runs.
        public var faults: [Fault]
    }

    /// Event names a fault may name; `run` is the run loop.
    static let faultHooks = LifecycleEvent.allNames + ["didReceiveMemoryWarning", "run"]
    /// Hooks that have an answer to refuse with.
    static let refusableHooks: Set<String> = ["willFinishLaunching", "didFinishLaunching", "didUpdateConfiguration"]

    private let settings: Mutex<Settings>
    private let hookCount = Mutex<UInt64>(0)

    /// The settings in use now.
    public var currentSettings: Settings { settings.withLock { $0 } }

    /// Builds the service from its settings section.
    public init(configuration: ServiceSection) throws(ConfigurationError) {
        settings = Mutex(try Self.parse(configuration))
    }

    /// Validates a settings section strictly.
    public static func parse(_ configuration: ServiceSection) throws(ConfigurationError) -> Settings {
        try configuration.requireOnlyKeys(Self.settingKeys)
        let recordTo = try configuration.string("record-to")
        if let recordTo, !recordTo.hasPrefix("/") {
            throw configuration.error("record-to", "\"\(recordTo)\" is not an absolute path")
        }
        var faults: [Fault] = []
        for section in try configuration.sections("faults") ?? [] {
            try section.requireOnlyKeys(["hook", "action", "duration", "after"])
            guard let hook = try section.choice("hook", of: faultHooks) else {
                throw section.error(nil, "a fault needs a hook", hint: "one of \(faultHooks.joined(separator: ", "))")
            }
            guard let actionName = try section.choice("action", of: Fault.Action.allCases.map(\.rawValue)),
                let action = Fault.Action(rawValue: actionName)
            else {
                throw section.error(nil, "a fault needs an action", hint: "one of hang, throw, refuse, block, end")
            }
            let after = try section.duration("after")
            if hook == "run" {
                guard action == .throw || action == .end else {
                    throw section.error("action", "the run loop can only throw or end", hint: "action: throw or action: end, with after: for when")
                }
            } else if action == .end {
                throw section.error("action", "only the run loop can end", hint: "use hook: run, or throw to fail a hook")
            } else if after != nil {
                throw section.error("after", "only a run fault takes after:", hint: "hang and block take duration:")
            }
            let duration = try section.duration("duration")
            if duration != nil, action != .hang, action != .block {
                throw section.error("duration", "only hang and block take a duration")
            }
            if action == .refuse, !refusableHooks.contains(hook) {
                throw section.error("action", "\(hook) has no answer to refuse", hint: "refuse works on willFinishLaunching, didFinishLaunching and didUpdateConfiguration")
            }
            faults.append(Fault(hook: hook, action: action, duration: duration, after: after))
        }
        let keepState = try configuration.int("keep-state", in: 0...65536) ?? 0
        return Settings(recordTo: recordTo, keepState: keepState, faults: faults)
    }

    // MARK: Hooks

    public func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        if let restored = options.restoredState {
            application.logger.info("probe: restored \(restored.count) bytes of state", metadata: ["restored_bytes": "\(restored.count)"])
        }
        return try await hook(.willFinishLaunching, application)
    }

    public func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        try await hook(.didFinishLaunching, application)
    }

    public func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {
        _ = try await hook(.didBecomeActive, application)
    }

    public func applicationWillResignActive(_ application: ApplicationHandle) async throws {
        _ = try await hook(.willResignActive, application)
    }

    public func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        _ = try await hook(.didEnterBackground, application)
    }

    public func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
        _ = try await hook(.willEnterForeground, application)
    }

    public func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws {
        _ = try await hook(.didReceiveMemoryWarning(level), application)
    }

    public func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {
        _ = try await hook(.significantTimeChange, application)
    }

    public func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        _ = try await hook(.networkDidChange, application)
    }

    public func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {
        _ = try await hook(.powerStateDidChange, application)
    }

    public func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        _ = try await hook(.protectedDataWillBecomeUnavailable, application)
    }

    public func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        _ = try await hook(.protectedDataDidBecomeAvailable, application)
    }

    /// Waits until the host stops it, or plays its `run` fault.
    public func run(_ application: ApplicationHandle) async throws {
        let current = currentSettings
        guard let fault = current.faults.first(where: { $0.hook == "run" }) else {
            await parkUntilCancelled()
            return
        }
        if let path = current.recordTo {
            try Self.append("\(application.serviceName) run\n", to: path)
        }
        if let after = fault.after { try await Task.sleep(for: after) }
        application.logger.notice("probe fault: \(fault.action.rawValue) in run", metadata: ["event": "run"])
        if fault.action == .throw { throw InjectedFault(event: "run") }
    }

    public func applicationWillTerminate(_ application: ApplicationHandle) async throws {
        _ = try await hook(.willTerminate, application)
    }

    public func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        // Record and misbehave by the settings in force when the reload arrived.
        let accepted = try await hook(.didUpdateConfiguration, application)
        guard accepted else { return .restartRequired }
        let new = try Self.parse(configuration)
        settings.withLock { $0 = new }
        return .applied
    }

    /// Records the event, then applies its faults; returns false when a fault refuses.
    private func hook(_ event: LifecycleEvent, _ application: ApplicationHandle) async throws -> Bool {
        let current = currentSettings
        if current.keepState > 0 {
            let count = hookCount.withLock { $0 += 1; return $0 }
            application.keepRestorableState([UInt8](repeating: UInt8(truncatingIfNeeded: count), count: current.keepState))
        }
        if let path = current.recordTo {
            try Self.append("\(application.serviceName) \(event.name)\n", to: path)
        } else {
            application.logger.info("probe: \(event.name)", metadata: ["event": "\(event.name)"])
        }
        var answer = true
        for fault in current.faults where fault.hook != "run" && fault.matches(event.name) {
            application.logger.notice("probe fault: \(fault.action.rawValue) in \(event.name)", metadata: ["event": "\(event.name)"])
            switch fault.action {
            case .hang:
                if let duration = fault.duration {
                    try await Task.sleep(for: duration)
                } else {
                    while true { try await Task.sleep(for: .seconds(3600)) }
                }
            case .throw:
                throw InjectedFault(event: event.name)
            case .refuse:
                answer = false
            case .block:
                Self.blockThread(for: fault.duration)
            case .end:
                break
            }
        }
        return answer
    }

    /// Appends `line` with a single `O_APPEND` write and fsyncs it.
    static func append(_ line: String, to path: String) throws(RecordFailure) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw RecordFailure(operation: "open", path: path, code: errno) }
        defer { close(fd) }
        let bytes = Array(line.utf8)
        var written: Int
        repeat {
            written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        } while written < 0 && errno == EINTR
        guard written == bytes.count else {
            throw RecordFailure(operation: "write", path: path, code: written < 0 ? errno : EIO)
        }
        guard fsync(fd) == 0 else { throw RecordFailure(operation: "fsync", path: path, code: errno) }
    }

    /// Sleeps synchronously, holding the calling thread.
    static func blockThread(for duration: Duration?) {
        guard let duration else {
            while true { sleep(3600) }
        }
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }
}

import AppHost
import AppHostDaemon
import AppHostServices
import AppHostSupport
import AppHostSystemd

/// One reader of outside bytes, fed what the daemon feeds it, with the reader's invariants as
/// traps: a trap is a finding (libFuzzer saves the input; the replay names it).
enum FuzzTarget: String, CaseIterable {
    /// `JSONValue(parsing:)`, as the state files are read: an accepted input renders and parses
    /// back to the same value.
    case json
    /// The config loader, from YAML text to `DaemonConfiguration` or the list of problems: every
    /// problem names the file and says something.
    case config
    /// `RestorableState(decoding:)`, the fd store's and the state directory's bytes: an accepted
    /// input encodes and decodes back to the same state.
    case restorableState = "restorable-state"
    /// `ExitCause(serviceResult:exitCode:exitStatus:)`, what systemd passes `record-exit` (the
    /// input's three NUL-separated parts).
    case exitCause = "exit-cause"
    /// `launch-state.json` (and its `.previous`): an accepted record writes and reads back the
    /// same.
    case launchRecord = "launch-record"
    /// `last-reload.json`, which `apphostd reload` waits for: round trip.
    case reloadRecord = "reload-record"
    /// Analytics' `summary.json`, through the store's reader: round trip, and a refusal names
    /// the file.
    case summary
    /// Analytics' `events.log`: the framing's scan and the store's torn-tail recovery.
    case analyticsLog = "analytics-log"
    /// `$MEMORY_PRESSURE_WATCH` and `$MEMORY_PRESSURE_WRITE`, resolved as at start.
    case memoryPressure = "memory-pressure"
    /// The command line, NUL-separated.
    case commandLine = "command-line"
    /// The session secret's file.
    case sessionSecret = "session-secret"

    /// The process's one registry (building it is not what is measured).
    static let registry = BuiltinServices.registry()

    func run(_ bytes: [UInt8]) {
        switch self {
        case .json: Self.json(bytes)
        case .config: Self.config(bytes)
        case .restorableState: Self.restorableState(bytes)
        case .exitCause: Self.exitCause(bytes)
        case .launchRecord: Self.launchRecord(bytes)
        case .reloadRecord: Self.reloadRecord(bytes)
        case .summary: Self.summary(bytes)
        case .analyticsLog: Self.analyticsLog(bytes)
        case .memoryPressure: Self.memoryPressure(bytes)
        case .commandLine: Self.commandLine(bytes)
        case .sessionSecret: Self.sessionSecret(bytes)
        }
    }

    static func json(_ bytes: [UInt8]) {
        guard let value = try? JSONValue(parsing: bytes) else { return }
        let text = value.rendered()
        guard let again = try? JSONValue(parsing: Array(text.utf8)) else {
            fatalError("JSON: an accepted value renders as text that does not parse: \(text)")
        }
        precondition(again == value, "JSON: an accepted value does not come back the same: \(text)")
    }

    static func config(_ bytes: [UInt8]) {
        let loader = ConfigurationLoader(registry: registry, environment: ["STATE_DIRECTORY": "/nonexistent/fuzz-state"])
        do {
            _ = try loader.load(text: String(decoding: bytes, as: UTF8.self), file: "fuzz.yaml")
        } catch {
            precondition(!error.errors.isEmpty, "config: a refusal with no problem in it")
            for problem in error.errors {
                precondition(problem.file == "fuzz.yaml", "config: a problem that does not name the file: \(problem)")
                precondition(!problem.message.isEmpty, "config: a problem without a message: \(problem)")
            }
        }
    }

    static func restorableState(_ bytes: [UInt8]) {
        let state: RestorableState
        do {
            state = try RestorableState(decoding: bytes)
        } catch {
            precondition(!error.description.isEmpty, "restorable state: a refusal without a message")
            return
        }
        let again = try? RestorableState(decoding: state.encoded())
        precondition(again == state, "restorable state: an accepted state does not come back the same")
    }

    static func exitCause(_ bytes: [UInt8]) {
        let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let field = { (index: Int) in index < parts.count ? parts[index] : nil }
        do {
            let cause = try ExitCause(serviceResult: field(0), exitCode: field(1), exitStatus: field(2))
            precondition(!cause.description.isEmpty, "exit cause: an accepted cause without words")
        } catch {
            precondition(!error.description.isEmpty, "exit cause: a refusal without a message")
        }
    }
}

import AppHost

extension ExitCause {
    /// The cause systemd describes to `ExecStopPost=` (systemd 232+, systemd.exec(5)):
    /// `$SERVICE_RESULT` (`success`, `exit-code`, `signal`, `core-dump`, `watchdog`, `timeout`,
    /// `oom-kill`, …), `$EXIT_CODE` (`exited`, `killed`, `dumped`; unset when no process ran) and
    /// `$EXIT_STATUS` (the status, or the signal's name without `SIG`). A watchdog kill shows as
    /// `dumped`/`ABRT` with `SERVICE_RESULT=watchdog`: the result wins. A result this binary
    /// does not know (a newer systemd, `protocol`, `resources`) is told by how the process ended.
    /// - Throws: `ExitRecordError` naming the variable that is missing or is not what systemd
    ///   writes there; nothing is guessed from a value that is not.
    public init(serviceResult: String?, exitCode: String?, exitStatus: String?) throws(ExitRecordError) {
        guard let serviceResult else { throw .missing(variable: "SERVICE_RESULT") }
        guard Self.isResultWord(serviceResult) else {
            throw .invalid(variable: "SERVICE_RESULT", value: serviceResult, expected: "a service result such as success, exit-code, signal or watchdog")
        }
        let process = try Self.processEnd(exitCode: exitCode, exitStatus: exitStatus)
        switch serviceResult {
        case "success": self = .clean
        case "watchdog": self = .watchdog
        case "timeout": self = .timeout
        case "oom-kill": self = .oomKill
        case "exit-code", "signal", "core-dump":
            guard let process else { throw .missing(variable: "EXIT_CODE") }
            self = process
        default:
            self = process.flatMap { $0 == .clean ? nil : $0 } ?? .unknown
        }
    }

    /// How the process ended, from `$EXIT_CODE` and `$EXIT_STATUS`; nil when neither is set.
    private static func processEnd(exitCode: String?, exitStatus: String?) throws(ExitRecordError) -> ExitCause? {
        guard exitCode != nil || exitStatus != nil else { return nil }
        guard let exitCode else { throw .missing(variable: "EXIT_CODE") }
        guard let exitStatus else { throw .missing(variable: "EXIT_STATUS") }
        switch exitCode {
        case "exited":
            guard exitStatus.utf8.count <= 3, let status = Int(exitStatus), (0...255).contains(status) else {
                throw .invalid(variable: "EXIT_STATUS", value: exitStatus, expected: "an exit status from 0 to 255 (EXIT_CODE=exited)")
            }
            return status == 0 ? .clean : .exitCode(status)
        case "killed", "dumped":
            guard isSignalName(exitStatus) else {
                throw .invalid(variable: "EXIT_STATUS", value: exitStatus, expected: "a signal name without SIG, such as KILL (EXIT_CODE=\(exitCode))")
            }
            return exitCode == "killed" ? .signal(exitStatus) : .coreDump(exitStatus)
        default:
            throw .invalid(variable: "EXIT_CODE", value: exitCode, expected: "exited, killed or dumped")
        }
    }

    /// What a service result looks like: 1 to 32 small letters, digits and `-`.
    private static func isResultWord(_ value: String) -> Bool {
        (1...32).contains(value.utf8.count)
            && value.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-") }
    }

    /// The line `LaunchStateFiles` keeps in `last-exit`: `signal KILL`, `exit-code 3`, `clean`.
    var recordText: String {
        switch self {
        case .clean: "clean"
        case .exitCode(let code): "exit-code \(code)"
        case .signal(let name): "signal \(name)"
        case .coreDump(let name): "core-dump \(name)"
        case .watchdog: "watchdog"
        case .timeout: "timeout"
        case .oomKill: "oom-kill"
        case .unknown: "unknown"
        }
    }

    /// Reads `recordText` back (a trailing newline allowed); nil for anything else.
    init?(recordText text: String) {
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard let first = parts.first else { return nil }
        switch (first, parts.count) {
        case ("clean", 1): self = .clean
        case ("watchdog", 1): self = .watchdog
        case ("timeout", 1): self = .timeout
        case ("oom-kill", 1): self = .oomKill
        case ("unknown", 1): self = .unknown
        case ("exit-code", 2):
            guard parts[1].utf8.count <= 3, let code = Int(parts[1]), (1...255).contains(code) else { return nil }
            self = .exitCode(code)
        case ("signal", 2), ("core-dump", 2):
            let name = String(parts[1])
            guard Self.isSignalName(name) else { return nil }
            self = first == "signal" ? .signal(name) : .coreDump(name)
        default: return nil
        }
    }
}

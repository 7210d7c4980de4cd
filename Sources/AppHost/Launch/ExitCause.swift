/// Why the previous run ended: what systemd saw when it ended (recorded by `apphostd
/// record-exit` in the unit's `ExecStopPost=`), or, without such a record, what the running
/// marker says. Outside systemd nothing records the cause, so only `.clean` and `.unknown`
/// occur there.
///
/// In the spirit of Android's `ApplicationExitInfo` and iOS MetricKit's exit reasons: a launch
/// after a crash can say which crash.
public enum ExitCause: Sendable, Hashable, Codable, CustomStringConvertible {
    /// It ended cleanly (exit status 0 after a requested stop).
    case clean
    /// It exited with this status (1–255) on its own.
    case exitCode(Int)
    /// A signal killed it, named as `kill -l` and systemd spell it (`KILL`, `TERM`), without
    /// the `SIG`.
    case signal(String)
    /// A signal killed it and it dumped core (`SEGV`, `ABRT`).
    case coreDump(String)
    /// systemd's watchdog killed it: no `WATCHDOG=1` in time, or a `WATCHDOG=trigger`.
    case watchdog
    /// systemd stopped waiting for it: a start or a stop took longer than the unit allows.
    case timeout
    /// An OOM killer (the kernel's or systemd-oomd) ended it.
    case oomKill
    /// It did not end cleanly and nothing recorded why: a power loss, a host crash, or a kill
    /// where no `ExecStopPost=` ran (outside systemd).
    case unknown

    /// `clean`, `exit code 3`, `signal KILL`, `core dump (signal SEGV)`, `watchdog`, `timeout`,
    /// `OOM kill`, `unknown`: what the journal line at launch and `apphostd analytics` say.
    public var description: String {
        switch self {
        case .clean: "clean"
        case .exitCode(let code): "exit code \(code)"
        case .signal(let name): "signal \(name)"
        case .coreDump(let name): "core dump (signal \(name))"
        case .watchdog: "watchdog"
        case .timeout: "timeout"
        case .oomKill: "OOM kill"
        case .unknown: "unknown"
        }
    }

    /// The cause without its detail (which signal, which code): `clean`, `exit-code`, `signal`,
    /// `core-dump`, `watchdog`, `timeout`, `oom-kill` or `unknown`, so a metric's label takes few
    /// values.
    package var kind: String {
        switch self {
        case .clean: "clean"
        case .exitCode: "exit-code"
        case .signal: "signal"
        case .coreDump: "core-dump"
        case .watchdog: "watchdog"
        case .timeout: "timeout"
        case .oomKill: "oom-kill"
        case .unknown: "unknown"
        }
    }

    /// Every `kind`.
    package static let kinds = ["clean", "exit-code", "signal", "core-dump", "watchdog", "timeout", "oom-kill", "unknown"]

    /// The `kind` of a cause as `description` spells it (how analytics keeps causes); `unknown`
    /// for text no cause has.
    package static func kind(ofDescription text: String) -> String {
        switch text {
        case "clean", "watchdog", "timeout", "unknown": text
        case "OOM kill": "oom-kill"
        case _ where text.hasPrefix("exit code "): "exit-code"
        case _ where text.hasPrefix("signal "): "signal"
        case _ where text.hasPrefix("core dump (signal "): "core-dump"
        default: "unknown"
        }
    }

    /// Whether a signal name is one systemd could have written: a capital letter, then up to 15
    /// capital letters, digits and `+` (`KILL`, `RTMIN+1`).
    package static func isSignalName(_ name: String) -> Bool {
        (1...16).contains(name.utf8.count)
            && name.utf8.first.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } == true
            && name.utf8.allSatisfy { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "+") }
    }
}

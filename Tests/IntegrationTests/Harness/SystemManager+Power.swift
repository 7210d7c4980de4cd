import AppHostTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Sleep and power-off of the booted container, never of this machine.
//
// Every boot is prepared so that a suspend inside can do nothing to the host: nspawn binds a file
// of the boot directory over /sys/power/state (logind sees a writable file offering `mem`, so it
// believes it can suspend, and a systemd-sleep that ran anyway could only write into that file),
// and a drop-in makes systemd-suspend.service run /bin/true instead of systemd-sleep. `suspend()`
// checks both, and that it is inside this boot's container, in the same `nsenter … sh -c` that
// runs `systemctl suspend`.
//
// Why `systemd-detect-virt --container` must say `systemd-nspawn`, and not just anything but
// `none`: the host that runs these tests may itself be a container (it says `docker` on the
// machine this was written on), so "not none" would hold outside the test container too.
extension SystemManager {
    /// What the bound `/sys/power/state` holds: what the kernel shows on a machine that can
    /// freeze, suspend to RAM and hibernate (one line; systemd reads the first line without its
    /// newline). `suspend()` requires exactly this text, and that the file is not sysfs.
    static let powerStateText = "freeze mem disk\n"
    /// The drop-in that makes systemd-suspend.service a no-op.
    static let suspendDropIn = "/etc/systemd/system/systemd-suspend.service.d/apphostd-test.conf"
    /// Its text: the first `ExecStart=` clears systemd-sleep.
    static let suspendDropInText = "[Service]\nExecStart=\nExecStart=/bin/true\n"
    /// logind's drop-in: how long logind waits for delay inhibitors.
    static let logindDropIn = "/etc/systemd/logind.conf.d/apphostd-test.conf"
    /// `InhibitDelayMaxSec=` in `logindDropIn` (logind's default is 5 s).
    static let inhibitDelayMax: Duration = .seconds(2)
    /// A file holding the boot's machine name: the helpers check it inside before acting, so a
    /// PID that is not this boot's container (or the host) is never suspended or powered off.
    static let machineMarker = "/etc/apphostd-test-machine"
    /// The user made at every boot (`useradd -m`) for login sessions (`openSession(user:)`).
    static let testUser = "tester"
    /// A second user made at every boot, for a second user's session on seat0.
    static let secondUser = "tester2"
    /// The exit status with which the guard script refuses (the reason is on stderr).
    static let refusalStatus: Int32 = 90

    /// The file bound over the container's `/sys/power/state`.
    static func powerStateFile(directory: String) -> String { directory + "/power-state" }

    /// The file bound over this container's `/sys/power/state`, seen from the host.
    var powerStateFile: String { Self.powerStateFile(directory: directory) }

    /// Before the boot: the power-state file, the suspend and logind drop-ins, the machine marker
    /// and the users `tester` and `tester2`.
    static func preparePowerAndLogind(directory: String, machine: String) async throws {
        let root = directory + "/root"
        try powerStateText.write(toFile: powerStateFile(directory: directory), atomically: false, encoding: .utf8)
        for (path, text) in [
            (suspendDropIn, suspendDropInText),
            (logindDropIn, "[Login]\nInhibitDelayMaxSec=\(inhibitDelayMax.components.seconds)\n"),
            (machineMarker, machine + "\n"),
        ] {
            let hostPath = root + path
            try FileManager.default.createDirectory(atPath: (hostPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: hostPath, atomically: true, encoding: .utf8)
        }
        for name in [testUser, secondUser] {
            let user = try await ProcessRunner.run(["useradd", "--root", root, "-m", name])
            guard user.succeeded else { throw HarnessError("useradd --root \(root) -m \(name) failed: \(user)") }
        }
    }

    /// The guard every power action runs inside, then the action. Arguments: the machine name,
    /// the power-state text (without its newline), and `suspend` or `poweroff`. Exits with
    /// `refusalStatus` and the reason on stderr when a check fails.
    static let guardScript = #"""
        refuse() { echo "refused: $*" >&2; exit 90; }
        virt=$(systemd-detect-virt --container 2>/dev/null)
        [ "$virt" = systemd-nspawn ] || refuse "systemd-detect-virt --container says '$virt', not systemd-nspawn"
        [ "$(cat /etc/apphostd-test-machine 2>/dev/null)" = "$1" ] || refuse "/etc/apphostd-test-machine does not name this boot's machine $1"
        case "$3" in
        suspend)
            fs=$(stat -f -c %T /sys/power/state 2>&1) || refuse "cannot stat /sys/power/state: $fs"
            [ "$fs" != sysfs ] || refuse "/sys/power/state is the kernel's (sysfs), not the test's bound file"
            [ "$(cat /sys/power/state)" = "$2" ] || refuse "/sys/power/state does not hold the test's text '$2'"
            exec_start=$(systemctl show -p ExecStart systemd-suspend.service 2>&1) || refuse "systemctl show systemd-suspend.service failed: $exec_start"
            case "$exec_start" in *systemd-sleep*) refuse "systemd-suspend.service would run systemd-sleep: $exec_start" ;; esac
            case "$exec_start" in "ExecStart={ path=/bin/true ; "*) ;; *) refuse "systemd-suspend.service does not run /bin/true: $exec_start" ;; esac
            exec systemctl suspend ;;
        poweroff)
            exec systemctl poweroff ;;
        *)
            refuse "unknown action '$3'" ;;
        esac
        """#

    /// Runs `guardScript` for `action` in one `nsenter … sh -c`.
    private func guarded(_ action: String) async throws -> CommandResult {
        let text = Self.powerStateText.trimmingCharacters(in: .newlines)
        let result = try await run(["sh", "-c", Self.guardScript, "sh", machine, text, action])
        if result.status == Self.refusalStatus {
            throw PowerActionRefused(action: action, reason: result.stderr.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return result
    }

    /// Suspends the container, never the host: the checks (inside this boot's nspawn container,
    /// `/sys/power/state` the bound file holding `powerStateText`, systemd-suspend.service running
    /// `/bin/true`) and `systemctl suspend` run in one `nsenter … sh -c`. Then waits (bounded)
    /// until systemd-suspend.service has finished and logind has logged "Operation '…' finished."
    /// (252 says 'sleep', 257 'suspend'), after which logind has sent `PrepareForSleep(false)`.
    /// - Throws: `PowerActionRefused` when a check fails (nothing was asked of logind then);
    ///   `HarnessError` when `systemctl suspend` fails or the sleep does not end in time.
    /// - Returns: the journal from just before the call to the end of the sleep.
    @discardableResult
    func suspend(timeout: Duration = .seconds(30)) async throws -> SuspendRecord {
        let cursor = try await journalCursor()
        let clock = ContinuousClock()
        let began = clock.now
        let result = try await guarded("suspend")
        guard result.succeeded else { throw HarnessError("systemctl suspend failed inside: \(result)") }
        var records: [[String: String]] = []
        let ended = try await eventually(timeout: timeout, every: .milliseconds(50)) {
            records = try await journal([], after: cursor)
            let suspendRan = records.contains { $0["UNIT"] == "systemd-suspend.service" && $0["JOB_RESULT"] != nil }
            return suspendRan && records.contains(where: SuspendRecord.isOperationFinished)
        }
        guard ended else {
            throw HarnessError("the suspend did not finish within \(timeout); journal since:\n\(records.suffix(40).map(Self.line).joined(separator: "\n"))")
        }
        return SuspendRecord(records: records, duration: clock.now - began)
    }

    /// Powers the container off from inside (`systemctl poweroff`, after the checks that this is
    /// the boot's nspawn container), as a machine shuts down, and waits (bounded) until nspawn
    /// has exited. The container is then gone: `run` throws, `isRunning` is false, and
    /// `powerOff()` (which the suite trait calls anyway) only removes the boot directory, so
    /// files left in `root` can be read until then.
    /// - Throws: `PowerActionRefused` when a check fails; `HarnessError` when nspawn does not exit.
    func powerOffInside(timeout: Duration = .seconds(60)) async throws {
        let result = try await guarded("poweroff")
        // systemctl may be killed by the shutdown it started before it exits: only the stop counts.
        guard await waitUntilStopped(timeout: timeout) else {
            throw HarnessError("the container did not stop within \(timeout) after systemctl poweroff (\(result))\n\(Self.nspawnLog(directory: directory))")
        }
    }
}

/// A power action the guard script refused, with its reason; nothing was asked of systemd.
struct PowerActionRefused: Error, CustomStringConvertible {
    /// `suspend` or `poweroff`.
    let action: String
    /// The failed check, as the script said it.
    let reason: String

    var description: String { "\(action) refused inside the container: \(reason)" }
}

/// The journal of one `suspend()`: from just before `systemctl suspend` to logind's
/// "Operation '…' finished.".
struct SuspendRecord: Sendable {
    /// Every record after the cursor taken before the call, oldest first.
    let records: [[String: String]]
    /// From the call to the end of the wait, on the host's clock.
    let duration: Duration

    /// logind's last line of a sleep ('sleep' on 252, 'suspend' on 257).
    static func isOperationFinished(_ record: [String: String]) -> Bool {
        record["SYSLOG_IDENTIFIER"] == "systemd-logind"
            && record["MESSAGE"].map { $0.hasPrefix("Operation '") && $0.hasSuffix("' finished.") } == true
    }

    /// The first record whose message contains `text` (from `identifier` when given).
    func first(containing text: String, from identifier: String? = nil) -> [String: String]? {
        records.first { record in
            (identifier == nil || record["SYSLOG_IDENTIFIER"] == identifier) && record["MESSAGE"]?.contains(text) == true
        }
    }

    /// When a record was logged, on the monotonic clock: the sender's own timestamp where the
    /// journal has it, else when journald received it (journal order across processes is not
    /// event order).
    static func monotonic(_ record: [String: String]) -> Duration? {
        guard let micros = (record["_SOURCE_MONOTONIC_TIMESTAMP"] ?? record["__MONOTONIC_TIMESTAMP"]).flatMap({ Int64($0) }) else { return nil }
        return .microseconds(micros)
    }

    /// systemd-suspend.service's job result (`done` when it ran), or nil if the journal lacks it.
    var suspendJobResult: String? {
        records.first { $0["UNIT"] == "systemd-suspend.service" && $0["JOB_RESULT"] != nil }?["JOB_RESULT"]
    }

    /// The records as `[PRIORITY] IDENTIFIER[TRANSPORT]: MESSAGE` lines, for messages.
    var text: String { records.map(SystemManager.line).joined(separator: "\n") }
}

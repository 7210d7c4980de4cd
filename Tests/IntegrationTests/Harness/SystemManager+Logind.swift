import AppHostTestSupport
import Foundation

// logind inside the booted container: login sessions, inhibitors, and a bus monitor to see
// logind's signals. Each long-lived process is a transient unit (`systemd-run`), so it belongs to
// the container and a `systemctl stop` ends it.
extension SystemManager {
    /// Opens a logind session for `user` the way a login does without a terminal: a transient
    /// unit with `PAMName=login` and `User=` running `sleep infinity` (no `TTYPath=`: the
    /// container's seat has no VTs), and returns the session's id (the audit session id on 252, such as `60`; `c1` on 257).
    ///
    /// The session's class is `user` (`XDG_SESSION_CLASS=user`, which systemd passes to PAM):
    /// without it pam_systemd makes a `background` session for lack of a TTY, and logind 257
    /// refuses to lock those ("Session does not support lock screen."). The unit's main process
    /// is the session's leader; `GetSessionByPID` finds the session. The id is not the unit's.
    ///
    /// With `seat` (`seat0`), `XDG_SEAT=` puts the session on that seat (pam_systemd reads it from
    /// PAM's environment, which systemd fills from `Environment=`); without it the session has no
    /// seat. The container's seat0 has no VTs, so logind makes each session attached to it the
    /// seat's active one at once (logind-seat.c, `seat_attach_session`).
    func openSession(user: String = SystemManager.testUser, seat: String? = nil, timeout: Duration = .seconds(20)) async throws -> String {
        let unit = "apphostd-test-session-" + UUID().uuidString.prefix(8).lowercased()
        let started = try await run([
            "systemd-run", "--unit=\(unit)", "-p", "PAMName=login", "-p", "User=\(user)",
            "-p", "Environment=XDG_SESSION_CLASS=user",
        ] + (seat.map { ["-p", "Environment=XDG_SEAT=\($0)"] } ?? []) + ["sleep", "infinity"])
        guard started.succeeded else { throw HarnessError("systemd-run of a login session failed: \(started)") }
        var last: CommandResult?
        var id: String?
        // pam_systemd creates the session in the unit's process before it execs sleep.
        let found = try await eventually(timeout: timeout, every: .milliseconds(50)) {
            let pid = try await show(unit + ".service", ["MainPID"])["MainPID"] ?? "0"
            guard pid != "0" else { return false }
            let path = try await run(["busctl", "call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "GetSessionByPID", "u", pid])
            last = path
            guard path.succeeded, let object = Self.busctlString(path.stdout) else { return false }
            let property = try await run(["busctl", "get-property", "org.freedesktop.login1", object, "org.freedesktop.login1.Session", "Id"])
            id = Self.busctlString(property.stdout)
            return id != nil
        }
        guard found, let id else {
            throw HarnessError("no logind session for \(unit) within \(timeout): \(last.map { "\($0)" } ?? "no answer")\n\(await journalText(unit: unit + ".service"))")
        }
        return id
    }

    /// Ends a session opened by `openSession` (`loginctl terminate-session`).
    func closeSession(_ id: String) async throws {
        let result = try await run(["loginctl", "terminate-session", id])
        guard result.succeeded else { throw HarnessError("loginctl terminate-session \(id) failed: \(result)") }
    }

    /// `loginctl lock-session ID`: logind emits the session's `Lock` signal.
    func lockSession(_ id: String) async throws {
        let result = try await run(["loginctl", "lock-session", id])
        guard result.succeeded else { throw HarnessError("loginctl lock-session \(id) failed: \(result)") }
    }

    /// `loginctl unlock-session ID`: logind emits the session's `Unlock` signal.
    func unlockSession(_ id: String) async throws {
        let result = try await run(["loginctl", "unlock-session", id])
        guard result.succeeded else { throw HarnessError("loginctl unlock-session \(id) failed: \(result)") }
    }

    /// `loginctl activate ID`: on a seat without VTs logind makes the session the seat's active
    /// one at once (seat0's `ActiveSession` changes).
    func activateSession(_ id: String) async throws {
        let result = try await run(["loginctl", "activate", id])
        guard result.succeeded else { throw HarnessError("loginctl activate \(id) failed: \(result)") }
    }

    /// The id of `seat`'s active session (its `ActiveSession` property), or "" when it has none.
    func activeSession(of seat: String = "seat0") async throws -> String {
        let result = try await run(["busctl", "get-property", "org.freedesktop.login1", "/org/freedesktop/login1/seat/\(seat)", "org.freedesktop.login1.Seat", "ActiveSession"])
        // `(so) "c1" "/org/freedesktop/login1/session/c1"`, or `(so) "" "/"`.
        let fields = result.stdout.split(separator: "\"", omittingEmptySubsequences: false)
        guard result.succeeded, fields.count >= 5 else { throw HarnessError("busctl get-property \(seat) ActiveSession failed: \(result)") }
        return String(fields[1])
    }

    /// `systemd-inhibit --list --no-pager`: the inhibitors logind holds, one per line.
    func inhibitors() async throws -> String {
        let result = try await run(["systemd-inhibit", "--list", "--no-pager"])
        guard result.succeeded else { throw HarnessError("systemd-inhibit --list failed: \(result)") }
        return result.stdout
    }

    /// Takes an inhibitor as `user` and holds it until the returned unit is stopped:
    /// `systemd-inhibit --mode=MODE --what=WHAT --who=WHO --why=WHY sleep infinity` in a transient
    /// unit. Waits (bounded) until `systemd-inhibit --list` shows it, and throws with the unit's
    /// journal (logind's refusal, such as "Access denied" without polkitd) when it does not.
    /// - Returns: the unit's name, for `systemctl stop`.
    func holdInhibitor(what: String, mode: String = "delay", user: String = "nobody", who: String, why: String, timeout: Duration = .seconds(20)) async throws -> String {
        let unit = "apphostd-test-inhibit-" + UUID().uuidString.prefix(8).lowercased() + ".service"
        let started = try await run([
            "systemd-run", "--unit=\(unit)", "-p", "User=\(user)",
            "systemd-inhibit", "--mode=\(mode)", "--what=\(what)", "--who=\(who)", "--why=\(why)", "sleep", "infinity",
        ])
        guard started.succeeded else { throw HarnessError("systemd-run of systemd-inhibit failed: \(started)") }
        var listed = ""
        var held = false
        _ = try await eventually(timeout: timeout, every: .milliseconds(50)) {
            listed = try await inhibitors()
            held = listed.split(separator: "\n").contains { $0.hasPrefix(who + " ") && $0.contains(" \(what) ") }
            // systemd-inhibit exits when logind refuses: no point in waiting for the list then.
            if held { return true }
            return try await show(unit, ["ActiveState"])["ActiveState"] != "active"
        }
        guard held else {
            throw HarnessError("the \(mode) inhibitor for \(what) as \(user) is not listed:\n\(listed)\n\(await journalText(unit: unit))")
        }
        return unit
    }

    /// The string of busctl's one-value answer (`o "/org/…"`, `s "c1"`), or nil.
    static func busctlString(_ output: String) -> String? {
        guard let open = output.firstIndex(of: "\""), let close = output.lastIndex(of: "\""), open < close else { return nil }
        return String(output[output.index(after: open)..<close])
    }

    // MARK: Watching the bus

    /// Starts `busctl monitor --json=short --match MATCH` in a transient unit that writes to a file
    /// under /var/tmp (on the root's disk, readable from the host), and waits (bounded) until
    /// dbus-daemon has made it a monitor (its journal line "… became a monitor."; busctl 257 says
    /// nothing itself with --json), so no signal after the return is missed.
    func startBusMonitor(match: String, timeout: Duration = .seconds(20)) async throws -> BusMonitor {
        let name = "apphostd-test-monitor-" + UUID().uuidString.prefix(8).lowercased()
        let monitor = BusMonitor(unit: name + ".service", output: "/var/tmp/\(name).json")
        let cursor = try await journalCursor()
        let started = try await run([
            "systemd-run", "--unit=\(monitor.unit)", "-p", "StandardOutput=file:\(monitor.output)",
            "busctl", "monitor", "--json=short", "--match", match,
        ])
        guard started.succeeded else { throw HarnessError("systemd-run of busctl monitor failed: \(started)") }
        var pid = "0"
        let ready = try await eventually(timeout: timeout, every: .milliseconds(50)) {
            pid = try await show(monitor.unit, ["MainPID"])["MainPID"] ?? "0"
            guard pid != "0" else { return false }
            let records = try await journal(["SYSLOG_IDENTIFIER=dbus-daemon"], after: cursor)
            return records.contains { $0["MESSAGE"]?.contains("pid=\(pid) ") == true && $0["MESSAGE"]?.contains("became a monitor") == true }
        }
        guard ready else {
            throw HarnessError("busctl monitor (pid \(pid)) did not become a monitor within \(timeout)\n\(await journalText(unit: monitor.unit))")
        }
        return monitor
    }

    /// The signals `monitor` has seen so far, oldest first.
    func signals(_ monitor: BusMonitor) throws -> [BusSignal] {
        let text = (try? read(monitor.output)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(BusSignal.self, from: Data($0.utf8)) }
    }

    /// Waits (bounded) until `monitor` has seen a signal that satisfies `condition`; all it saw.
    @discardableResult
    func waitForSignal(_ monitor: BusMonitor, _ what: String, timeout: Duration = .seconds(20), _ condition: (BusSignal) -> Bool) async throws -> [BusSignal] {
        var seen: [BusSignal] = []
        let found = try await eventually(timeout: timeout, every: .milliseconds(50)) {
            seen = try signals(monitor)
            return seen.contains(where: condition)
        }
        guard found else { throw HarnessError("no \(what) on the bus within \(timeout); seen: \(seen)") }
        return seen
    }

    /// Stops the monitor's unit.
    func stop(_ monitor: BusMonitor) async throws {
        try await systemctl("stop", monitor.unit)
    }
}

/// A `busctl monitor` running inside the container (`SystemManager.startBusMonitor`).
struct BusMonitor: Sendable {
    /// Its transient unit.
    let unit: String
    /// Where it writes, one JSON message a line (a path inside the container).
    let output: String
}

/// One message as `busctl monitor --json=short` prints it.
struct BusSignal: Decodable, Sendable, CustomStringConvertible {
    /// `signal`, `method_call`, ...
    let type: String
    /// The object path.
    let path: String?
    /// The interface.
    let interface: String?
    /// The member (signal name).
    let member: String?
    /// The body: its D-Bus signature and, for a body of booleans (`PrepareForSleep`), the values.
    let payload: Payload?

    /// The body of a message.
    struct Payload: Decodable, Sendable {
        /// The D-Bus signature (`b`, or empty).
        let type: String
        /// The values when the body is booleans only; nil for any other body.
        let booleans: [Bool]?

        enum CodingKeys: String, CodingKey { case type, data }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            booleans = try? container.decode([Bool].self, forKey: .data)
        }
    }

    /// The single boolean argument, as in `PrepareForSleep(b)`.
    var boolean: Bool? { payload?.booleans?.count == 1 ? payload?.booleans?.first : nil }

    var description: String {
        "\(member ?? "?")(\(payload?.booleans.map { $0.map(String.init).joined(separator: ", ") } ?? payload?.type ?? "")) on \(path ?? "?")"
    }
}

import AppHostTestSupport
import Foundation
import Testing

// What the checks share: the booted system, bounded waits on the unit's properties and its
// journal, the daemon brought back to active, the current invocation, `apphostd analytics`.
extension IntegrationSuites.SystemManagerTests {
    /// The booted system of this suite.
    static func system() throws -> SystemManager {
        guard let system = SystemManager.current else { throw HarnessError("no booted system (the suite's .bootedSystem trait provides it)") }
        return system
    }

    /// Waits (bounded) until the unit's properties satisfy `condition`; the error shows the
    /// last properties and the unit's journal.
    @discardableResult
    static func waitForStatus(_ system: SystemManager, _ what: String, timeout: Duration = .seconds(20), _ condition: ([String: String]) -> Bool) async throws -> [String: String] {
        var last: [String: String] = [:]
        let reached = try await eventually(timeout: timeout, every: .milliseconds(50)) {
            last = try await system.show(unit)
            return condition(last)
        }
        guard reached else {
            throw HarnessError("timed out after \(timeout) waiting for \(what); last: \(last)\njournal:\n\(await system.journalText(unit: unit))")
        }
        return last
    }

    /// Waits (bounded) until the journal after `cursor` holds a record matching `condition`
    /// among `matches`, and returns those records.
    @discardableResult
    static func waitForJournal(_ system: SystemManager, _ what: String, matches: [String], after cursor: String?, timeout: Duration = .seconds(20), _ condition: ([String: String]) -> Bool) async throws -> [[String: String]] {
        var records: [[String: String]] = []
        let found = try await eventually(timeout: timeout, every: .milliseconds(100)) {
            records = try await system.journal(matches, after: cursor)
            return records.contains(where: condition)
        }
        guard found else {
            throw HarnessError("timed out after \(timeout) waiting for \(what) in the journal; it has:\n\(records.suffix(40).map(SystemManager.line).joined(separator: "\n"))")
        }
        return records
    }

    static func isActiveAndForeground(_ status: [String: String]) -> Bool {
        guard status["ActiveState"] == "active", let text = status["StatusText"] else { return false }
        return withoutCause(text).hasPrefix(activeStatus) && !text.contains("session locked")
    }

    /// `STATUS=` without the cause after the state: `active (resume) · 4 services` reads as
    /// `active · 4 services`.
    static func withoutCause(_ text: String) -> String {
        guard let open = text.firstIndex(of: "("), let close = text.firstIndex(of: ")"), open < close,
            text[..<open].hasSuffix(" "), !text[..<open].dropLast().contains(" "), text[text.index(after: close)...].hasPrefix(" · ")
        else { return text }
        return String(text[..<text.index(before: open)]) + String(text[text.index(after: close)...])
    }

    static func isBackgroundAndLocked(_ status: [String: String]) -> Bool {
        status["ActiveState"] == "active" && status["StatusText"]?.hasPrefix("background · 4 services") == true
            && status["StatusText"]?.contains("session locked (entered background)") == true
    }

    /// Brings the daemon to running and in the foreground (started if an earlier test
    /// stopped it, sent to the foreground if it was left in the background).
    @discardableResult
    static func ensureActive(_ system: SystemManager) async throws -> [String: String] {
        let status = try await system.show(unit)
        if status["ActiveState"] != "active" {
            let start = try await system.systemctl("start", unit, timeout: .seconds(120))
            guard start.succeeded else { throw HarnessError("systemctl start \(unit) failed: \(start)\n\(await system.journalText(unit: unit))") }
        } else if status["StatusText"]?.hasPrefix("background") == true {
            try await system.systemctl("kill", "-s", "SIGRTMIN+2", unit)
        }
        return try await waitForStatus(system, "the daemon running in the foreground", isActiveAndForeground)
    }

    /// The installed config with `host` added under `host:`, each line of `replacing` given its
    /// new text, and a fifth service, `entry`, at the end; `body` runs with it installed and the
    /// daemon restarted on it (and running, five services), then the config is put back and the
    /// daemon restarted on that.
    static func withAFifthService(
        _ system: SystemManager, host: String = "", replacing: [String: String] = [:], entry: String, _ body: () async throws -> Void
    ) async throws {
        let good = try system.read(configPath)
        var changed = good.replacingOccurrences(of: "\nhost:\n", with: "\nhost:\n" + host)
        try #require(host.isEmpty || changed != good, "the installed config has no 'host:' line")
        for (line, replacement) in replacing {
            try #require(changed.contains("\n" + line + "\n"), "the installed config has no line '\(line)'")
            changed = changed.replacingOccurrences(of: "\n" + line + "\n", with: "\n" + replacement + "\n")
        }
        changed += (changed.hasSuffix("\n") ? "" : "\n") + entry
        try system.write(changed, to: configPath)
        do {
            try await system.systemctl("reset-failed", unit)
            let restart = try await system.systemctl("restart", unit, timeout: .seconds(120))
            #expect(restart.succeeded, "\(restart)")
            try await waitForStatus(system, "running with a fifth service") { $0["StatusText"]?.hasPrefix("active · 5 services") == true }
            try await body()
        } catch {
            Issue.record(error)
        }
        try system.write(good, to: configPath)
        try await system.systemctl("reset-failed", unit)
        let restart = try await system.systemctl("restart", unit, timeout: .seconds(120))
        #expect(restart.succeeded, "\(restart)")
        try await ensureActive(system)
    }

    /// The current invocation's id: the daemon's own records carry it as `_SYSTEMD_INVOCATION_ID`.
    static func invocation(_ system: SystemManager) async throws -> String {
        let id = try await system.show(unit, ["InvocationID"])["InvocationID"] ?? ""
        guard !id.isEmpty else { throw HarnessError("no InvocationID for \(unit)") }
        return id
    }

    /// `apphostd analytics --json` inside (the state the dynamic user keeps).
    static func analytics(_ system: SystemManager) async throws -> [String: Any] {
        let report = try await system.run(["/usr/local/bin/apphostd", "analytics", "--json", "--state-directory", "/var/lib/apphostd"])
        guard report.succeeded, let object = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any] else {
            throw HarnessError("apphostd analytics failed: \(report)")
        }
        return object
    }
}

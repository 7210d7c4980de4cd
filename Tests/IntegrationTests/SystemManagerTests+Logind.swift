import AppHostTestSupport
import Foundation
import Testing

// logind's sleep under systemd as PID 1 with the real logind and polkitd: the daemon's delay
// inhibitors, a suspend (of the container only: SystemManager+Power) that gives every service its
// background before logind starts systemd-suspend.service and its foreground after, and a
// service that hangs, which is named while the inhibitor is released before logind's limit.
extension IntegrationSuites.SystemManagerTests {
    /// The daemon's lines of `systemd-inhibit --list`.
    static func daemonInhibitors(_ system: SystemManager) async throws -> [Substring] {
        try await system.inhibitors().split(separator: "\n").filter { $0.hasPrefix("apphostd ") }
    }

    /// Waits (bounded) until the daemon holds its two delay inhibitors; returns its lines.
    @discardableResult
    static func waitForInhibitors(_ system: SystemManager) async throws -> [Substring] {
        var lines: [Substring] = []
        let held = try await eventually(timeout: .seconds(20), every: .milliseconds(100)) {
            lines = try await daemonInhibitors(system)
            return lines.contains { $0.contains(" sleep ") && $0.hasSuffix(" delay") }
                && lines.contains { $0.contains(" shutdown ") && $0.hasSuffix(" delay") }
        }
        guard held else {
            throw HarnessError("the daemon's two delay inhibitors are not listed: \(lines)\n\(await system.journalText(unit: unit))")
        }
        return lines
    }

    /// When `record` was sent: the kernel's timestamp of the datagram journald received
    /// (`_SOURCE_REALTIME_TIMESTAMP`), else journald's own; one clock for every process.
    static func sentAt(_ record: [String: String]) -> Int64? {
        (record["_SOURCE_REALTIME_TIMESTAMP"] ?? record["__REALTIME_TIMESTAMP"]).flatMap { Int64($0) }
    }

    // Fails on a daemon without the logind edge: nothing is listed.
    @Test("the daemon holds a delay inhibitor for sleep and one for shutdown, under its name, with a reason an operator understands")
    func theDaemonHoldsItsInhibitors() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let lines = try await Self.waitForInhibitors(system)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("saves its services' state before the machine sleeps") }, "\(lines)")
        #expect(lines.contains { $0.contains("saves its services' state before the machine shuts down") }, "\(lines)")
    }

    // Fails when the bus name and logind's client each open a connection: two unique names.
    @Test("the daemon, a system unit, holds one connection to the system bus: its bus name (LogControl1, Host1) and logind's client share it")
    func oneSystemBusConnection() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await Self.waitForInhibitors(system)
        let pid = try await system.show(Self.unit, ["MainPID"])["MainPID"] ?? "0"
        let listed = try await system.run(["busctl", "list", "--unique", "--no-legend", "--no-pager"])
        let mine = listed.stdout.split(separator: "\n").filter { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init) == pid }
        #expect(listed.succeeded && mine.count == 1, "the daemon's (pid \(pid)) connections: \(mine)\n\(listed)")
        // Both are served on it: the name's objects, and logind's inhibitors (above).
        let level = try await system.run(["busctl", "get-property", "org.apphost.apphostd", "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1", "LogLevel"])
        #expect(level.succeeded, "\(level)")
    }

    // Fails on a daemon that does not follow PrepareForSleep: no request with cause sleep.
    @Test("systemctl suspend: every service gets its background (cause sleep) before logind starts systemd-suspend.service, logind never reaches its limit, and after the resume the daemon is in the foreground (cause resume), a new inhibitor held and the sleep counted")
    func aSuspendSavesBeforeTheSleep() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await Self.waitForInhibitors(system)
        // Analytics flushes on a background: the sleeps counted before this one.
        try await system.systemctl("kill", "-s", "SIGRTMIN+1", Self.unit)
        try await Self.waitForStatus(system, "the daemon in the background") { $0["StatusText"]?.hasPrefix("background · 4 services") == true }
        let sleepsBefore = try await Self.analytics(system)["sleeps"] as? Int ?? 0
        try await Self.ensureActive(system)
        let invocation = try await Self.invocation(system)
        let sleep = try await system.suspend()
        let daemon = sleep.records.filter { $0["_SYSTEMD_INVOCATION_ID"] == invocation }
        // The logger's audit trail: both background events of the request, with its cause.
        let background = daemon.filter { $0["EVENT"] == "didEnterBackground" && $0["CAUSE"] == "sleep" }
        #expect(background.count == 1, "\(sleep.text)")
        #expect(daemon.contains { $0["EVENT"] == "willResignActive" && $0["CAUSE"] == "sleep" }, "\(sleep.text)")
        let ready = try #require(daemon.first { $0["MESSAGE"]?.hasPrefix("ready for sleep after ") == true }, "\(sleep.text)")
        // logind went on when the daemon released its inhibitor, not at its limit.
        #expect(!sleep.records.contains { $0["MESSAGE"]?.contains("inhibitor timeout is reached") == true }, "\(sleep.text)")
        let suspendStart = try #require(sleep.records.first { $0["UNIT"] == "systemd-suspend.service" && $0["_PID"] == "1" }, "\(sleep.text)")
        let readyAt = try #require(Self.sentAt(ready)), suspendAt = try #require(Self.sentAt(suspendStart))
        #expect(readyAt < suspendAt, "the daemon was ready \(readyAt) before systemd-suspend.service started \(suspendAt)")
        // Before: in the background because of the sleep; after: back, because of the resume.
        let resumed = try await Self.waitForStatus(system, "the daemon back in the foreground after the resume") {
            $0["StatusText"]?.hasPrefix("active (resume) · 4 services") == true
        }
        #expect(resumed["ActiveState"] == "active", "\(resumed)")
        try await Self.waitForInhibitors(system)
        // Analytics flushes on the next background: one sleep.
        try await system.systemctl("kill", "-s", "SIGRTMIN+1", Self.unit)
        try await Self.waitForStatus(system, "the daemon in the background") { $0["StatusText"]?.hasPrefix("background · 4 services") == true }
        let report = try await Self.analytics(system)
        #expect(report["sleeps"] as? Int == sleepsBefore + 1, "\(report)")
        try await Self.ensureActive(system)
    }

    // Fails on a daemon that waits for its hooks whatever logind's limit: logind then logs that
    // its inhibitor timeout was reached.
    @Test("a service that hangs in didEnterBackground: the daemon releases its inhibitor before logind's limit and names the service")
    func aHangingServiceIsNamedAndTheSleepGoesOn() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let hang = """
              - name: sleepy
                type: probe
                deadline: 10s
                settings:
                  faults:
                    - { hook: didEnterBackground, action: hang, duration: 6s }

            """
        try await Self.withAFifthService(system, entry: hang) {
            try await Self.waitForInhibitors(system)
            let invocation = try await Self.invocation(system)
            let sleep = try await system.suspend()
            let daemon = sleep.records.filter { $0["_SYSTEMD_INVOCATION_ID"] == invocation }
            let released = try #require(daemon.first { $0["MESSAGE"]?.hasPrefix("released the sleep inhibitor after ") == true }, "\(sleep.text)")
            #expect(released["MESSAGE"]?.contains("sleepy is still inside applicationDidEnterBackground") == true, "\(released)")
            #expect(!sleep.records.contains { $0["MESSAGE"]?.contains("inhibitor timeout is reached") == true }, "\(sleep.text)")
            #expect(sleep.duration < .seconds(5), "logind waits 2s at most, and the daemon released before: \(sleep.duration)")
            // The hang ends, the resume brings the daemon back.
            try await Self.waitForStatus(system, "the daemon back in the foreground after the hang", timeout: .seconds(30)) {
                $0["StatusText"]?.hasPrefix("active (resume) · 5 services") == true
            }
            // The late end of the saving request leaves the inhibitor taken after the resume alone.
            let lines = try await Self.waitForInhibitors(system)
            #expect(lines.count == 2, "\(lines)")
        }
    }
}

extension IntegrationSuites.SystemManagerTests {
    // Fails on a daemon that does not follow the session's screen lock: STATUS= never says so.
    @Test("loginctl lock-session on the session the config names (user:tester): the session locks (STATUS= says screen locked, a notification is redacted), and unlock-session unlocks it")
    func aScreenLockLocksTheSession() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let probe = """
              - name: witness
                type: probe

            """
        try await Self.withAFifthService(system, host: "  logind-session: user:\(SystemManager.testUser)\n", entry: probe) {
            let invocation = try await Self.invocation(system)
            let cursor = try await system.journalCursor()
            // The daemon started before the session: it follows it once logind says it is there.
            let session = try await system.openSession(user: SystemManager.testUser)
            try await Self.waitForJournal(system, "the daemon following session \(session)", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"]?.hasPrefix("following the screen lock of logind session \(session) ") == true
            }
            try await system.lockSession(session)
            let locked = try await Self.waitForStatus(system, "the session locked by the screen") {
                $0["StatusText"]?.contains("session locked (screen locked)") == true
            }
            #expect(locked["StatusText"]?.hasPrefix("active") == true, "the screen lock moves nothing: \(locked)")
            let warned = try await system.journalCursor()
            try await system.systemctl("kill", "-s", "SIGRTMIN+18", Self.unit)
            try await Self.waitForJournal(system, "a redacted notification", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: warned) {
                $0["NOTIFICATION_REDACTED"] == "true"
            }
            let records = try await system.journal(["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor)
            #expect(records.contains { $0["EVENT"] == "protectedDataWillBecomeUnavailable" && $0["CAUSE"] == "screen-lock" }, "\(records.suffix(20).map(SystemManager.line))")
            do {
                try await system.unlockSession(session)
                try await Self.waitForStatus(system, "the session unlocked with the screen") {
                    $0["StatusText"]?.hasPrefix("active · 5 services") == true && $0["StatusText"]?.contains("session locked") == false
                }
            } catch {
                try? await system.closeSession(session)
                throw error
            }
            try await system.closeSession(session)
        }
    }
}

extension IntegrationSuites.SystemManagerTests {
    // Fails on a daemon that says nothing (or says it for each inhibitor, or at every resume).
    @Test("without polkitd (polkit.service masked) logind refuses the inhibitors: the daemon says so once, with what to install, holds none, and the signals work as ever")
    func withoutPolkitTheDaemonSaysSoOnce() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await system.systemctl("mask", "--now", "polkit.service")
        do {
            let cursor = try await system.journalCursor()
            let restart = try await system.systemctl("restart", Self.unit, timeout: .seconds(120))
            #expect(restart.succeeded, "\(restart)")
            try await Self.ensureActive(system)
            let invocation = try await Self.invocation(system)
            let refused = "logind refused the delay inhibitors ("
            let records = try await Self.waitForJournal(system, "the refusal", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"]?.hasPrefix(refused) == true
            }
            let line = records.first { $0["MESSAGE"]?.hasPrefix(refused) == true }?["MESSAGE"] ?? ""
            #expect(line.contains("install polkitd"), "\(line)")
            #expect(try await Self.daemonInhibitors(system).isEmpty)
            // The signals work as ever; and by now both refusals have come.
            try await system.systemctl("kill", "-s", "SIGRTMIN+1", Self.unit)
            try await Self.waitForStatus(system, "the daemon in the background") { $0["StatusText"]?.hasPrefix("background · 4 services") == true }
            try await Self.ensureActive(system)
            let all = try await system.journal(["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor)
            let refusals = all.filter { $0["MESSAGE"]?.hasPrefix("logind refused") == true }
            #expect(refusals.count == 1, "said once: \(refusals.map(SystemManager.line))")
        } catch {
            try await system.systemctl("unmask", "polkit.service")
            throw error
        }
        try await system.systemctl("unmask", "polkit.service")
        let restart = try await system.systemctl("restart", Self.unit, timeout: .seconds(120))
        #expect(restart.succeeded, "\(restart)")
        try await Self.ensureActive(system)
        try await Self.waitForInhibitors(system)
    }
}

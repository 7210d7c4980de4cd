import AppHostTestSupport
import Foundation
import Testing

// seat0 switching users under systemd as PID 1 with the real logind: the daemon, a system unit
// with `host.logind-session: auto`, follows seat0's `ActiveSession`. The sessions are put on
// seat0 with XDG_SEAT (SystemManager+Logind); the container's seat0 has no VTs, so each session
// attached to it becomes the active one at once, and `loginctl activate` switches at once.
extension IntegrationSuites.SystemManagerTests {
    /// `auto`'s line when the daemon follows `session`.
    static func following(_ session: String) -> String {
        "following the screen lock of logind session \(session) (host.logind-session: auto)"
    }

    /// The daemon's screen lines among `records` ("the screen of logind session 3 is locked").
    static func screenLines(_ records: [[String: String]]) -> [String] {
        records.compactMap { $0["MESSAGE"] }.filter { $0.hasPrefix("the screen of logind session ") }
    }

    /// The records up to the first whose message is `message` (not included).
    static func before(_ message: String, in records: [[String: String]]) -> ArraySlice<[String: String]> {
        records.prefix { $0["MESSAGE"] != message }
    }

    /// Whether `STATUS=` says the session is locked by the followed screen.
    static func isScreenLocked(_ status: [String: String]) -> Bool {
        status["StatusText"]?.contains("session locked (screen locked)") == true
    }

    /// Whether `STATUS=` says active with the five services and no session lock.
    static func isUnlocked(_ status: [String: String]) -> Bool {
        status["StatusText"]?.hasPrefix("active · 5 services") == true && status["StatusText"]?.contains("session locked") == false
    }

    // Fails on a daemon that stays with the first session it found, that keeps listening to a
    // session it no longer follows, or that unlocks when seat0 has no active session.
    @Test("auto on a system unit follows seat0's active session as users switch: A's screen lock, then B's once B takes seat0 (A's lock no longer counts), A's again after a switch back, and locked stays locked while seat0 has no active session")
    func autoFollowsSeat0AsUsersSwitch() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let probe = """
              - name: witness
                type: probe

            """
        try await Self.withAFifthService(system, host: "  logind-session: auto\n", entry: probe) {
            let invocation = try await Self.invocation(system)
            let daemon = ["_SYSTEMD_INVOCATION_ID=\(invocation)"]
            var open: [String] = []
            do {
                // A (tester) on seat0: the seat's active session, which the daemon follows.
                var cursor = try await system.journalCursor()
                let a = try await system.openSession(user: SystemManager.testUser, seat: "seat0")
                open.append(a)
                #expect(try await system.activeSession() == a)
                try await Self.waitForJournal(system, "the daemon following A (\(a))", matches: daemon, after: cursor) { $0["MESSAGE"] == Self.following(a) }
                try await system.lockSession(a)
                try await Self.waitForStatus(system, "the session locked by A's screen", Self.isScreenLocked)
                try await system.unlockSession(a)
                try await Self.waitForStatus(system, "the session unlocked with A's screen", Self.isUnlocked)

                // B (tester2) on seat0: seat0 switches to B, and so does the daemon.
                cursor = try await system.journalCursor()
                let b = try await system.openSession(user: SystemManager.secondUser, seat: "seat0")
                open.append(b)
                #expect(try await system.activeSession() == b)
                try await Self.waitForJournal(system, "the daemon following B (\(b))", matches: daemon, after: cursor) { $0["MESSAGE"] == Self.following(b) }
                try await system.lockSession(b)
                try await Self.waitForStatus(system, "the session locked by B's screen", Self.isScreenLocked)
                try await system.unlockSession(b)
                try await Self.waitForStatus(system, "the session unlocked with B's screen", Self.isUnlocked)

                // A's Lock while B is active, then seat0 back to A. logind's Lock of A comes before
                // seat0's PropertiesChanged on the daemon's connection, and the daemon logs in
                // order: a screen line before it follows A again would be A's Lock counted.
                let monitor = try await system.startBusMonitor(match: "type='signal',interface='org.freedesktop.login1.Session',member='Lock'")
                cursor = try await system.journalCursor()
                try await system.lockSession(a)
                try await system.waitForSignal(monitor, "A's Lock (A inactive)") { $0.member == "Lock" }
                try await system.stop(monitor)
                try await system.activateSession(a)
                #expect(try await system.activeSession() == a)
                var records = try await Self.waitForJournal(system, "the daemon following A again", matches: daemon, after: cursor) { $0["MESSAGE"] == Self.following(a) }
                #expect(Self.screenLines(Array(Self.before(Self.following(a), in: records))).isEmpty, "A's Lock while B was active: \(records.map(SystemManager.line))")
                #expect(Self.isUnlocked(try await system.show(Self.unit)))

                // A locks and logs out: seat0 has no active session (logind activates no other);
                // the daemon says so and stays locked until it follows a session again (B's
                // LockedHint, false, unlocks it).
                try await system.lockSession(a)
                try await Self.waitForStatus(system, "the session locked by A's screen", Self.isScreenLocked)
                cursor = try await system.journalCursor()
                try await system.closeSession(a)
                open.removeAll { $0 == a }
                let none = "no logind session's screen lock to follow (no active session on seat0); followed once there is one"
                try await Self.waitForJournal(system, "the daemon without a session", matches: daemon, after: cursor) { $0["MESSAGE"] == none }
                #expect(try await system.activeSession() == "")
                #expect(Self.isScreenLocked(try await system.show(Self.unit)), "fails closed")
                try await system.activateSession(b)
                records = try await Self.waitForJournal(system, "B's screen unlocking the session", matches: daemon, after: cursor) {
                    $0["MESSAGE"] == "the screen of logind session \(b) is unlocked"
                }
                #expect(Self.screenLines(records) == ["the screen of logind session \(b) is unlocked"], "\(records.map(SystemManager.line))")
                #expect(Self.before(Self.following(b), in: records).contains { $0["MESSAGE"] == none }, "\(records.map(SystemManager.line))")
                try await Self.waitForStatus(system, "the session unlocked by following B", Self.isUnlocked)
            } catch {
                for id in open { try? await system.closeSession(id) }
                throw error
            }
            for id in open { try await system.closeSession(id) }
        }
    }
}

import AppHostTestSupport
import Foundation
import Testing

// The lifecycle signals through `systemctl kill`: SIGUSR1, SIGRTMIN+1 and +2, SIGRTMIN+18.
extension IntegrationSuites.SystemManagerTests {
    @Test("systemctl kill -s SIGUSR1 moves StatusText to the background (session locked) and back (the secret read again)")
    func usr1TogglesBackgroundAndBack() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let cursor = try await system.journalCursor()
        try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
        try await Self.waitForStatus(system, "StatusText background with the session locked", Self.isBackgroundAndLocked)
        try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
        try await Self.waitForStatus(system, "StatusText back to \(Self.activeStatus), unlocked", Self.isActiveAndForeground)
        // Unlocking re-reads the secret from $CREDENTIALS_DIRECTORY.
        try await Self.waitForJournal(system, "session unlocked", matches: ["-u", Self.unit], after: cursor) {
            $0["MESSAGE"] == "session unlocked: entered foreground"
        }
    }

    @Test("SIGRTMIN+1 goes to the background (twice is once), SIGRTMIN+2 to the foreground")
    func realtimeSignalsAreExplicitTransitions() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let invocation = try await Self.invocation(system)
        let cursor = try await system.journalCursor()
        try await system.systemctl("kill", "-s", "SIGRTMIN+1", Self.unit)
        try await Self.waitForStatus(system, "StatusText background after SIGRTMIN+1", Self.isBackgroundAndLocked)
        try await system.systemctl("kill", "-s", "SIGRTMIN+1", Self.unit)
        // Queued behind the second SIGRTMIN+1, so handled after it.
        try await system.systemctl("kill", "-s", "SIGRTMIN+2", Self.unit)
        try await Self.waitForStatus(system, "StatusText active after SIGRTMIN+2", Self.isActiveAndForeground)
        let records = try await Self.waitForJournal(system, "didBecomeActive", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
            $0["EVENT"] == "didBecomeActive"
        }
        let events = records.compactMap { $0["EVENT"] }
        #expect(events.filter { $0 == "didEnterBackground" }.count == 1, "the second SIGRTMIN+1 was not a no-op: \(events)")
        #expect(events.filter { $0 == "willEnterForeground" }.count == 1, "\(events)")
    }

    @Test("systemctl kill -s SIGRTMIN+18 gives a critical memory warning, logged by the logger service")
    func rtmin18GivesMemoryWarning() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let invocation = try await Self.invocation(system)
        let cursor = try await system.journalCursor()
        try await system.systemctl("kill", "-s", "SIGRTMIN+18", Self.unit)
        let records = try await Self.waitForJournal(system, "didReceiveMemoryWarning from the logger", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
            ($0["MESSAGE"] ?? "").hasPrefix("didReceiveMemoryWarning") && $0["SERVICE"] == "logger"
        }
        let warning = records.first { ($0["MESSAGE"] ?? "").hasPrefix("didReceiveMemoryWarning") }
        #expect(warning?["EVENT"] == "didReceiveMemoryWarning.critical", "\(warning ?? [:])")
        let status = try await system.show(Self.unit)
        #expect(Self.isActiveAndForeground(status), "\(status)")
    }
}

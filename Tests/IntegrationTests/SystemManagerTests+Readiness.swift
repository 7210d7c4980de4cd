import AppHostTestSupport
import Foundation
import Testing

// `systemctl enable --now` up to READY=1, and the session secret through `LoadCredential=`.
extension IntegrationSuites.SystemManagerTests {
    @Test("systemctl enable --now apphostd starts the installed daemon and returns once it is READY")
    func enableNowReachesReady() async throws {
        let system = try Self.system()
        let enable = try await system.systemctl("enable", "--now", Self.unit, timeout: .seconds(120))
        let enableJournal = enable.succeeded ? "" : await system.journalText(unit: Self.unit)
        #expect(enable.succeeded, "\(enable)\n\(enableJournal)")
        // Type=notify: the start job finished only after READY=1, so it is active now.
        let status = try await system.show(Self.unit)
        #expect(status["ActiveState"] == "active" && status["SubState"] == "running", "\(status)")
        try await Self.waitForStatus(system, "StatusText \(Self.activeStatus)", Self.isActiveAndForeground)
        let enabled = try await system.systemctl("is-enabled", Self.unit)
        #expect(enabled.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "enabled", "\(enabled)")
    }

    @Test("the session secret arrives through LoadCredential=: session-lock runs unlocked, not 'secret unavailable'")
    func sessionSecretArrivesAsCredential() async throws {
        let system = try Self.system()
        let status = try await Self.ensureActive(system)
        #expect(status["StatusText"]?.contains("secret unavailable") == false, "\(status)")
        let credential = try await system.run(["test", "-s", "/run/credentials/apphostd.service/session-secret"])
        #expect(credential.succeeded, "no credential in /run/credentials/apphostd.service: \(credential)")
        let records = try await system.journal(["_SYSTEMD_INVOCATION_ID=\(try await Self.invocation(system))"])
        let unavailable = records.filter { ($0["MESSAGE"] ?? "").contains("secret unavailable") || ($0["MESSAGE"] ?? "").contains("session stays locked") }
        #expect(unavailable.isEmpty, "\(unavailable.map(SystemManager.line))")
    }
}

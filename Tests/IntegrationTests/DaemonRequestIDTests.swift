import Foundation
import Testing

extension IntegrationSuites {
    /// One id per request in a real `apphostd` under the user manager: `journalctl REQUEST_ID=`
    /// of a `SIGUSR1` shows what it caused, across services.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonRequestIDTests {
        @Test("journalctl REQUEST_ID=<the id of a SIGUSR1> returns that request's records from the logger's audit trail and both probes, and nothing of the next request")
        func journalctlByRequestID() async throws {
            let services = [
                "  - name: logger", "    type: logger",
                "  - name: first", "    type: probe",
                "  - name: second", "    type: probe",
            ]
            try await DaemonUnderTest.with(services: [], extraServices: services) { daemon in
                try await daemon.startOrFail()
                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("background")
                var audit: [String: String]?
                try await daemon.waitUntil("the logger's audit record of didEnterBackground") {
                    audit = try await daemon.daemonRecords().last { $0["SERVICE"] == "logger" && $0["EVENT"] == "didEnterBackground" }
                    return audit != nil
                }
                let id = try #require(audit?["REQUEST_ID"], "the audit record has no REQUEST_ID: \(audit ?? [:])")
                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("active")

                let records = try await daemon.sandbox.journal(["REQUEST_ID=\(id)"])
                let services = Set(records.compactMap { $0["SERVICE"] })
                #expect(services.isSuperset(of: ["logger", "first", "second"]), "\(records.map { "\($0["SERVICE"] ?? "-"): \($0["MESSAGE"] ?? "")" })")
                #expect(records.contains { $0["SERVICE"] == "first" && $0["MESSAGE"] == "probe: didEnterBackground" })
                #expect(records.contains { $0["SERVICE"] == "second" && $0["MESSAGE"] == "probe: willResignActive" })
                #expect(!records.contains { $0["EVENT"] == "willEnterForeground" }, "the next request's records have another id")
                #expect(records.allSatisfy { $0["_SYSTEMD_USER_UNIT"] == daemon.unitName })
            }
        }
    }
}

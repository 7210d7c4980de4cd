import Foundation
import Testing

extension IntegrationSuites {
    /// Composites in a real `apphostd` under the user manager: what a first-of and a one-of
    /// chose shows in `systemctl status` (StatusText) and in the journal, by path.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonCompositeTests {
        static func config(probeLog log: String) -> String {
            """
            host:
              log-level: debug
            services:
              - name: notify
                required: true
                first-of:
                  - name: hardware
                    type: probe
                    settings: {record-to: \(log), faults: [{hook: willFinishLaunching, action: refuse}]}
                  - name: fallback
                    type: probe
                    settings: {record-to: \(log)}
              - name: sync
                group:
                  - name: main
                    type: probe
                    required: true
                    settings: {record-to: \(log)}
                  - name: extra
                    type: probe
                    settings: {record-to: \(log), faults: [{hook: didFinishLaunching, action: throw}]}
              - name: backup
                one-of:
                  - name: local
                    type: probe
                    settings: {record-to: \(log)}
                  - name: remote
                    type: probe
                    settings: {record-to: \(log)}
                select: {environment: BACKUP_MODE, default: local}

            """
        }

        @Test("a first-of whose first child refuses and a group with an optional child that fails: systemctl status and the journal show what was chosen and what failed, by path")
        func firstOfAndGroupUnderTheUserManager() async throws {
            try await DaemonUnderTest.with(services: [], unit: { unit, _ in unit.environment["BACKUP_MODE"] = "remote" }) { daemon in
                try daemon.writeConfig(text: Self.config(probeLog: daemon.probeLogPath))
                try await daemon.startOrFail()
                let status = try await daemon.status()
                #expect(status["StatusText"] == "active · 3 services · notify → fallback · backup → remote · disabled: sync/extra", "\(status)")
                let shown = try await daemon.sandbox.systemctl("status", "--no-pager", daemon.unitName)
                #expect(shown.stdout.contains("Status: \"active · 3 services · notify → fallback"), "\(shown.stdout)")

                let records = try await daemon.daemonRecords()
                let chose = records.first { $0["MESSAGE"]?.hasPrefix("notify: first-of chose notify/fallback after notify/hardware failed applicationWillFinishLaunching: returned false") == true }
                #expect(chose?["SERVICE"] == "notify", "\(records.compactMap { $0["MESSAGE"] })")
                #expect(records.contains { $0["MESSAGE"] == "backup: one-of chose backup/remote (BACKUP_MODE=remote)" })
                let disabled = records.first { $0["MESSAGE"]?.hasPrefix("optional service disabled: sync/extra failed applicationDidFinishLaunching") == true }
                #expect(disabled?["SERVICE"] == "sync/extra" && disabled?["PRIORITY"] == "4", "\(String(describing: disabled))")
                // A child's own records carry its path.
                #expect(records.contains { $0["SERVICE"] == "notify/hardware" && $0["MESSAGE"]?.hasPrefix("probe fault: refuse in willFinishLaunching") == true }, "\(records.filter { $0["SERVICE"]?.hasPrefix("notify") == true })")

                let log = daemon.probeLog
                #expect(log.events(of: "notify/hardware") == ["willFinishLaunching"], "\(log)")
                #expect(log.events(of: "notify/fallback") == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"], "\(log)")
                #expect(log.events(of: "backup/local").isEmpty, "\(log)")
                try await daemon.signal("SIGUSR1")
                try await daemon.waitUntil("the chosen children in the background") { daemon.probeLog.contains("notify/fallback", "didEnterBackground") }
                #expect(!daemon.probeLog.contains("sync/extra", "didEnterBackground"))
                #expect(!daemon.probeLog.contains("notify/hardware", "didEnterBackground"))
            }
        }
    }
}

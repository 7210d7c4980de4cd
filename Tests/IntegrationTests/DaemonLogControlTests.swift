import Foundation
import Testing

extension IntegrationSuites {
    /// `systemctl --user service-log-level` and `service-log-target` under the user manager:
    /// the daemon serves org.freedesktop.LogControl1 on the session bus under the unit's
    /// `BusName=` (taken from the shipped unit).
    @Suite(.serialized)
    struct DaemonLogControlTests {
        static func trimmed(_ result: CommandResult) -> String {
            result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        @Test(
            "systemctl --user service-log-level prints and sets the level live (the logger's info records stop at warning and come back at info); service-log-target reads and sets the target",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func userManagerReachesTheDaemon() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")], extraServices: ["  - logger"]) { daemon in
                try await daemon.startOrFail()
                // Log control joins the bus after READY=1 (off the way to readiness): the name is
                // there once the daemon says so.
                try await daemon.waitUntil("the daemon's name is on the bus") {
                    try await daemon.daemonRecords().contains { $0["MESSAGE"]?.hasPrefix("log control on the bus as ") == true }
                }
                let systemctl = daemon.sandbox
                let level = try await systemctl.systemctl("service-log-level", daemon.unitName)
                let diagnostics = level.succeeded ? "" : await daemon.diagnostics()
                #expect(Self.trimmed(level) == "debug", "the generated config's host.log-level: \(level)\n\(diagnostics)")

                #expect(try await systemctl.systemctl("service-log-level", daemon.unitName, "warning").succeeded)
                #expect(Self.trimmed(try await systemctl.systemctl("service-log-level", daemon.unitName)) == "warning")
                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("background")
                #expect(try await systemctl.systemctl("service-log-level", daemon.unitName, "info").succeeded)
                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("active")
                try await daemon.waitUntil("the foreground's records") {
                    try await daemon.daemonRecords().contains { $0["EVENT"] == "didBecomeActive" && $0["TO_STATE"] == "active" && $0["FROM_STATE"] == "inactive" }
                }
                let events = try await daemon.daemonRecords().compactMap { $0["EVENT"] }
                #expect(events.contains("willEnterForeground"))
                #expect(!events.contains("willResignActive") && !events.contains("didEnterBackground"), "records written at warning: \(events)")

                #expect(Self.trimmed(try await systemctl.systemctl("service-log-target", daemon.unitName)) == "auto")
                #expect(try await systemctl.systemctl("service-log-target", daemon.unitName, "console").succeeded)
                #expect(Self.trimmed(try await systemctl.systemctl("service-log-target", daemon.unitName)) == "console")
                #expect(try await systemctl.systemctl("service-log-target", daemon.unitName, "auto").succeeded)
                #expect(try await systemctl.systemctl("service-log-level", daemon.unitName, "loud").succeeded == false)
            }
        }
    }
}

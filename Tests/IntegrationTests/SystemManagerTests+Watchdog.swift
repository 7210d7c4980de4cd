import AppHostTestSupport
import Foundation
import Testing

// A required service stuck in a hook, with and without `WatchdogSec=`.
extension IntegrationSuites.SystemManagerTests {
    /// The installed config with a fifth, required service that hangs in
    /// `applicationWillResignActive` (never at a launch into the background) and a 2 s stall
    /// limit; `body` runs with it installed and the daemon restarted on it, then the config is
    /// put back and the daemon restarted on that.
    static func withAStuckRequiredService(_ system: SystemManager, _ body: () async throws -> Void) async throws {
        try await withAFifthService(system, host: "  stall-limit: 2s\n", entry: """
              - name: stuck
                type: probe
                required: true
                deadline: 500ms
                settings:
                  faults:
                    - { hook: willResignActive, action: hang }

            """, body)
    }

    // Fails on a daemon whose watchdog pings whatever its services do: systemd would never
    // restart it, and its launch could not name the watchdog.
    @Test("a required service stuck in a hook past the stall limit, with WatchdogSec=: WATCHDOG=trigger, systemd restarts it at once, and the next launch names the watchdog, its state back")
    func aStuckRequiredServiceTriggersTheWatchdog() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await Self.withAStuckRequiredService(system) {
            let before = try await system.show(Self.unit)
            let cursor = try await system.journalCursor()
            let sent = ContinuousClock.now
            try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
            // Far below WatchdogSec=30s: only the trigger brings systemd in this soon.
            let status = try await Self.waitForStatus(system, "a restart into the background", timeout: .seconds(20)) {
                $0["MainPID"] != before["MainPID"] && $0["MainPID"] != "0" && $0["StatusText"]?.hasPrefix("background · 5 services") == true
            }
            let elapsed = ContinuousClock.now - sent
            #expect(elapsed < .seconds(15), "the restart took \(elapsed)")
            #expect(status["StatusText"]?.contains("session locked") == true, "\(status)")
            try await Self.waitForJournal(system, "the daemon naming the stuck service", matches: ["-u", Self.unit], after: cursor) {
                $0["MESSAGE"] == "unhealthy: stuck stuck in applicationWillResignActive for more than 2s"
            }
            let line = try await Self.previousExitLine(system, after: cursor, "watchdog")
            #expect(line["MESSAGE"]?.hasSuffix("the previous run ended: watchdog") == true, "\(line)")
            let invocation = try await Self.invocation(system)
            try await Self.waitForJournal(system, "the restore line", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"]?.hasPrefix("restored after an unclean exit (watchdog): background, session locked") == true
            }
        }
    }

    @Test("the same stuck service without WatchdogSec=: STATUS= says the host is unhealthy and why, and the daemon keeps serving")
    func aStuckRequiredServiceWithoutAWatchdogIsReported() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let dropIn = "/etc/systemd/system/apphostd.service.d/no-watchdog.conf"
        _ = try await system.run(["mkdir", "-p", "/etc/systemd/system/apphostd.service.d"])
        try system.write("[Service]\nWatchdogSec=0\n", to: dropIn)
        try await system.systemctl("daemon-reload")
        try await Self.withAStuckRequiredService(system) {
            let pid = try await system.show(Self.unit)["MainPID"]
            try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
            let unhealthy = try await Self.waitForStatus(system, "STATUS= naming the stuck service") {
                $0["StatusText"]?.contains("unhealthy: stuck stuck in applicationWillResignActive for more than 2s") == true
            }
            #expect(unhealthy["MainPID"] == pid, "\(unhealthy)")
            // Still serving: the foreground comes, the stuck service's calls wait behind its hook.
            try await system.systemctl("kill", "-s", "SIGRTMIN+2", Self.unit)
            let active = try await Self.waitForStatus(system, "the foreground, still unhealthy") {
                $0["StatusText"]?.hasPrefix("active · 5 services") == true && $0["StatusText"]?.contains("unhealthy: stuck") == true
            }
            #expect(active["MainPID"] == pid && active["ActiveState"] == "active", "\(active)")
        }
        _ = try await system.run(["rm", "-f", dropIn])
        try await system.systemctl("daemon-reload")
    }
}

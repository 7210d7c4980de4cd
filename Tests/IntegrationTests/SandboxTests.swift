import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// The harness itself, proven with a stand-in notify unit (bash + systemd-notify), so a failure in
    /// the daemon scenarios can be told apart from a broken sandbox.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunSandbox, "needs root, unshare, nsenter and systemd (reason printed)")
    )
    struct SandboxTests {
        /// The stand-in's program: ready with a status, a status change on SIGUSR1, clean stop on SIGTERM.
        static let standInScript = """
            echo stand-in starting
            trap 'systemd-notify --status="background (USR1)"; echo stand-in got USR1' USR1
            trap 'systemd-notify --stopping; echo stand-in stopping; exit 0' TERM
            systemd-notify --ready --status="active (stand-in)"
            while :; do sleep 0.05; done
            """

        static func standInUnit(script: String) -> String {
            """
            [Unit]
            Description=stand-in notify service for the harness self-test

            [Service]
            Type=notify
            NotifyAccess=main
            ExecStart=/bin/bash \(script)
            TimeoutStartSec=5s
            TimeoutStopSec=5s
            """
        }

        @Test("the sandbox starts a user manager and journald, and reports its timings")
        func startsAndStops() async throws {
            let sandbox = try await SystemdSandbox.start()
            let started = sandbox.startupTime
            print("IntegrationTests: sandbox ready in \(started) (journald \(sandbox.values["journald_ms"] ?? "?") ms, manager \(sandbox.values["manager_ms"] ?? "?") ms, bus from \(sandbox.values["dbus"] ?? "?"))")
            let state = try await sandbox.systemctl("is-system-running")
            #expect(["running", "degraded"].contains(state.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(state)")
            #expect(FileManager.default.fileExists(atPath: sandbox.runtimeDirectory + "/bus"), "no user bus socket")
            let namespaceJournal = try await sandbox.run(["test", "-S", "/run/systemd/journal/stdout"])
            #expect(namespaceJournal.succeeded, "journald's stdout socket missing inside the namespace")
            let clock = ContinuousClock()
            let stopBegan = clock.now
            await sandbox.stop()
            print("IntegrationTests: sandbox stopped in \(clock.now - stopBegan)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.directory), "sandbox directory not removed")
            #expect(kill(sandbox.pid, 0) != 0, "sandbox script still running")
        }

        @Test("a notify unit: start waits for READY, StatusText follows sd_notify, journal matches the user unit")
        func standInUnit() async throws {
            try await SystemdSandbox.with { sandbox in
                let script = sandbox.directory + "/standin.sh"
                try Self.standInScript.write(toFile: script, atomically: true, encoding: .utf8)
                try await sandbox.installUnit(name: "standin.service", text: Self.standInUnit(script: script))
                let start = try await sandbox.systemctl("start", "standin.service")
                try #require(start.succeeded, "\(start)")
                var status = try await sandbox.status(of: "standin.service")
                #expect(status["ActiveState"] == "active")
                #expect(status["StatusText"] == "active (stand-in)", "start returned before READY/STATUS: \(status)")

                let kill = try await sandbox.systemctl("kill", "--kill-who=main", "-s", "SIGUSR1", "standin.service")
                try #require(kill.succeeded, "\(kill)")
                let toggled = try await eventually(timeout: .seconds(5), every: .milliseconds(50)) {
                    try await sandbox.status(of: "standin.service")["StatusText"] == "background (USR1)"
                }
                let afterToggle = try await sandbox.status(of: "standin.service")
                #expect(toggled, "StatusText did not follow the signal: \(afterToggle)")

                let byOption = try await eventually(timeout: .seconds(5), every: .milliseconds(50)) {
                    try await sandbox.journal(userUnit: "standin.service").contains { $0["MESSAGE"] == "stand-in got USR1" }
                }
                let tail = byOption ? "" : await sandbox.journalTail()
                #expect(byOption, "--user-unit= did not find the unit's output:\n\(tail)")
                let byField = try await sandbox.journal(["_SYSTEMD_USER_UNIT=standin.service"])
                #expect(byField.contains { $0["MESSAGE"] == "stand-in starting" }, "_SYSTEMD_USER_UNIT= did not match")
                #expect(byField.allSatisfy { $0["_SYSTEMD_USER_UNIT"] == "standin.service" })

                let stop = try await sandbox.systemctl("stop", "standin.service")
                #expect(stop.succeeded, "\(stop)")
                status = try await sandbox.status(of: "standin.service")
                #expect(status["ActiveState"] == "inactive")
                #expect(status["Result"] == "success", "\(status)")
            }
        }
    }
}

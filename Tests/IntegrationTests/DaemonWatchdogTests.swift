import Foundation
import Testing

extension IntegrationSuites {
    /// The systemd watchdog (issue 3 and issue 5, "Reliability"): apphostd pings `WATCHDOG=1` from
    /// the host's serial event path, so a host stalled on purpose stops pinging and the real user
    /// manager kills and restarts the unit (`Restart=on-watchdog`); with the watchdog off there is
    /// no ping timer, and the idle daemon wakes no more often than the Swift runtime itself does.
    ///
    /// How to stall the serial path on purpose: a `hang` fault alone does not, because the host
    /// walks away from a hook once its deadline passed. A probe with its own long hook deadline
    /// (`deadline: 60s`) that hangs in `didEnterBackground` holds the fan-out, and so the serial
    /// path, for a minute.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonWatchdogTests {
        /// Voluntary context switches of all threads of `pid`, by thread id.
        static func switches(of pid: Int32) -> [String: Int] {
            let directory = "/proc/\(pid)/task"
            var counts: [String: Int] = [:]
            for thread in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
                guard let status = try? String(contentsOfFile: "\(directory)/\(thread)/status", encoding: .utf8) else { continue }
                for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                    counts[thread] = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
                }
            }
            return counts
        }

        /// How often the threads of `pid` went to sleep and woke again during `window`: the
        /// growth of each thread alive at both ends, plus the whole count of threads started in
        /// between. (A thread that ended in between is not counted; this is an upper-bound check.)
        static func wakeUps(of pid: Int32, over window: Duration) async throws -> Int {
            let before = switches(of: pid)
            try #require(!before.isEmpty, "cannot read /proc/\(pid)/task")
            try await Task.sleep(for: window)
            let after = switches(of: pid)
            return after.reduce(0) { total, entry in total + entry.value - (before[entry.key] ?? 0) }
        }

        static let watchdogSec = Duration.milliseconds(1500)

        @Test("a host stalled on its serial path stops pinging; the user manager kills it (Result=watchdog) and restarts it")
        func stalledHostIsRestarted() async throws {
            let staller = ProbeSpec("staller", deadline: "60s", faults: [.init(hook: "didEnterBackground", action: "hang")])
            try await DaemonUnderTest.with(services: [ProbeSpec("steady"), staller], unit: { unit, _ in
                unit.watchdogSec = "1500ms"
                unit.restart = "on-watchdog"
                // The watchdog sends SIGABRT; the Swift runtime's crash handler then runs
                // swift-backtrace, which here can hang until TimeoutAbortSec= (by default
                // TimeoutStopSec=) and systemd's SIGKILL. Keep that short, and no core file.
                unit.extraServiceLines += ["RestartSec=100ms", "TimeoutAbortSec=1s", "LimitCORE=0"]
            }) { daemon in
                try await daemon.startOrFail()
                let firstPID = try await daemon.mainPID()

                // Healthy: it keeps pinging (no restart over twice the watchdog time), and the
                // pings are real wake-ups (the contrast to the idle test below).
                let window = Self.watchdogSec * 2
                let wakeUps = try await Self.wakeUps(of: firstPID, over: window)
                print("IntegrationTests: \(wakeUps) wake-ups in \(window) with WatchdogSec=1.5s (ping every 750ms)")
                #expect(wakeUps >= 4, "the ping timer does not seem to run: \(wakeUps) wake-ups in \(window)")
                var status = try await daemon.sandbox.status(of: daemon.unitName, properties: ["NRestarts", "MainPID", "ActiveState"])
                let healthy = status["NRestarts"] == "0" && status["MainPID"] == "\(firstPID)" && status["ActiveState"] == "active"
                let healthyDiagnostics = healthy ? "" : await daemon.diagnostics()
                #expect(healthy, "a healthy daemon was restarted: \(status)\n\(healthyDiagnostics)")

                // Stall the serial path: background → the staller hangs inside its 60s deadline.
                let clock = ContinuousClock()
                let stalledAt = clock.now
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitUntil("the staller is inside didEnterBackground") {
                    daemon.probeLog.contains("staller", "didEnterBackground")
                }
                try await daemon.waitUntil("the user manager restarted the unit", timeout: .seconds(20), whileRunning: false) {
                    let status = try await daemon.sandbox.status(of: daemon.unitName, properties: ["NRestarts", "MainPID", "ActiveState"])
                    return (Int(status["NRestarts"] ?? "") ?? 0) >= 1 && status["ActiveState"] == "active"
                        && status["MainPID"] != "\(firstPID)" && status["MainPID"] != "0"
                }
                let restartedAfter = clock.now - stalledAt
                print("IntegrationTests: stalled host restarted after \(restartedAfter)")
                status = try await daemon.sandbox.status(of: daemon.unitName, properties: ["NRestarts", "MainPID", "StatusText"])
                let diagnostics = await daemon.diagnostics()
                #expect(status["NRestarts"] == "1", "\(status)\n\(diagnostics)")
                // ExecStopPost of the killed run saw SERVICE_RESULT=watchdog.
                let exits = ((try? String(contentsOfFile: daemon.exitRecordPath, encoding: .utf8)) ?? "").split(separator: "\n")
                #expect(exits.first?.hasPrefix("watchdog ") == true, "first run did not end by the watchdog: \(exits)\n\(diagnostics)")
                #expect(try await daemon.journal().contains { ($0["MESSAGE"] ?? "").contains("Watchdog timeout") },
                        "no watchdog timeout message from the manager:\n\(diagnostics)")
                // Killed within a few watchdog periods, not after the 60s hook deadline.
                #expect(restartedAfter < .seconds(10), "restart took \(restartedAfter)")
                // The new process launched the services again and is healthy.
                try await daemon.waitForState("active")
                let log = daemon.probeLog
                #expect(log.count("steady", "willFinishLaunching") == 2 && log.count("staller", "didBecomeActive") == 2, "\(log)")
                #expect(!log.contains("steady", "willTerminate"), "the stalled host cannot have terminated its services: \(log)")
            }
        }

        @Test("with the watchdog off there is no ping timer: the idle daemon wakes no more than the Swift runtime's own 1 Hz")
        func noTimerWithoutWatchdog() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b")]) { daemon in
                try await daemon.startOrFail()
                let pid = try await daemon.mainPID()
                let environment = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))).map { String(decoding: $0, as: UTF8.self) } ?? ""
                #expect(!environment.contains("WATCHDOG_USEC="), "the unit set a watchdog")
                try await daemon.waitUntil("the start record says the watchdog is off") {
                    try await daemon.daemonRecords().contains { record in
                        (record["MESSAGE"] ?? "").contains("starting") && record["WATCHDOG"] == "off"
                    }
                }
                // The launch's one write of its restorable state (coalesced for a second after
                // the launch) is start-up work, not idling: measure once it is on disk.
                try await daemon.waitUntil("the launch's restorable state on disk") {
                    FileManager.default.fileExists(atPath: daemon.stateDirectory + "/restorable-state")
                }
                // libdispatch on Linux runs a 1 Hz monitor of its worker pool in every process that
                // uses it (a bare Swift program with one Task shows the same); anything of the
                // daemon's own, like a 750ms ping, would at least double this.
                let window = Duration.seconds(3)
                let wakeUps = try await Self.wakeUps(of: pid, over: window)
                print("IntegrationTests: \(wakeUps) wake-ups in \(window) idle without a watchdog")
                let diagnostics = await daemon.diagnostics()
                #expect(wakeUps <= 3 + 2, "the idle daemon woke \(wakeUps) times in \(window)\n\(diagnostics)")
                #expect(try await daemon.mainPID() == pid)
            }
        }
    }
}

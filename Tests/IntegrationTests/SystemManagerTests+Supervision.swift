import AppHostTestSupport
import Foundation
import Testing

// Supervision under systemd as PID 1: a run loop that keeps failing, optional and required.
extension IntegrationSuites.SystemManagerTests {
    /// The delay a `NAME restarting in 1.05s (1/2 in 60s)` line names.
    static func restartDelay(_ message: String) -> Duration? {
        guard let range = message.range(of: " restarting in ") else { return nil }
        let word = message[range.upperBound...].prefix { $0 != " " }
        if word.hasSuffix("ms"), let value = Double(word.dropLast(2)) { return .milliseconds(value) }
        if word.hasSuffix("s"), let value = Double(word.dropLast()) { return .milliseconds(value * 1000) }
        return nil
    }

    /// A probe named flaky whose run loop plays `fault` (`throw, after: 100ms`), with a policy.
    static func flakyProbe(required: Bool, restart: String, delay: String, intensity: String, fault: String) -> String {
        """
              - name: flaky
                type: probe
                required: \(required)
                restart: \(restart)
                restart-delay: \(delay)
                restart-intensity: \(intensity)
                settings:
                  faults:
                    - { hook: run, action: \(fault) }

            """
    }

    // Fails on a daemon that logs a run loop's error and never runs it again.
    @Test("an optional probe whose run loop throws is restarted with growing delays, STATUS= shows the restart waiting, and past its intensity it is stopped while the rest run on")
    func aFailingRunLoopIsRestartedThenStopped() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let cursor = try await system.journalCursor()
        try await Self.withAFifthService(system, entry: Self.flakyProbe(required: false, restart: "transient", delay: "1s", intensity: "2 in 60s", fault: "throw, after: 100ms")) {
            let invocation = try await Self.invocation(system)
            try await Self.waitForStatus(system, "STATUS= with the restart waiting") {
                $0["StatusText"]?.contains("flaky restarting (1/2 in 60s)") == true
            }
            let stopped = try await Self.waitForStatus(system, "the probe stopped, the daemon active", timeout: .seconds(30)) {
                $0["StatusText"]?.contains("disabled: flaky") == true
            }
            #expect(stopped["ActiveState"] == "active" && stopped["StatusText"]?.contains("unhealthy") == false, "\(stopped)")
            let records = try await Self.waitForJournal(system, "the probe stopped", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"] == "flaky failed 3 times in 60s: not restarted again; an optional service, so it is stopped"
            }
            let restarting = records.filter { $0["MESSAGE"]?.hasPrefix("flaky restarting in ") == true }
            #expect(restarting.map { $0["SERVICE"] } == ["flaky", "flaky"], "\(restarting)")
            #expect(restarting.map { $0["RESTART"] } == ["1", "2"], "\(restarting)")
            #expect(restarting.map { $0["ERROR"] } == ["probe fault injected in run", "probe fault injected in run"], "\(restarting)")
            let delays = restarting.compactMap { Self.restartDelay($0["MESSAGE"] ?? "") }
            try #require(delays.count == 2, "\(restarting)")
            #expect(delays[0] >= .seconds(1) && delays[0] <= .milliseconds(1100), "\(delays)")
            #expect(delays[1] >= .seconds(2) && delays[1] <= .milliseconds(2200), "the delay doubled: \(delays)")
            let errors = records.filter { $0["MESSAGE"] == "run loop ended with an error: probe fault injected in run" && $0["SERVICE"] == "flaky" }
            #expect(errors.count == 3, "\(records.suffix(30).map(SystemManager.line))")
            let restarted = records.filter { $0["MESSAGE"]?.hasPrefix("flaky restarted (") == true }
            #expect(restarted.count == 2)
            // The rest run on: the background still reaches every other service.
            try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
            try await Self.waitForStatus(system, "the background with the probe stopped") {
                $0["StatusText"]?.hasPrefix("background · 4 services") == true && $0["StatusText"]?.contains("disabled: flaky") == true
            }
        }
    }

    // Fails on a daemon that stays healthy with a dead run loop, or whose next launch cannot
    // say which service it was.
    @Test("a required probe whose run loop keeps failing makes the daemon unhealthy; with WatchdogSec= systemd restarts the unit, and the next launch names the watchdog and the service")
    func aRequiredServiceThatKeepsFailingTriggersTheWatchdog() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let cursor = try await system.journalCursor()
        try await Self.withAFifthService(system, entry: Self.flakyProbe(required: true, restart: "permanent", delay: "100ms", intensity: "1 in 60s", fault: "end, after: 1s")) {
            let first = try await system.show(Self.unit, ["MainPID", "NRestarts"])
            try await Self.waitForJournal(system, "the unhealthy line", matches: ["-u", Self.unit], after: cursor, timeout: .seconds(30)) {
                $0["MESSAGE"] == "unhealthy: flaky failed 2 times in 60s"
            }
            try await Self.waitForStatus(system, "a restart by the watchdog", timeout: .seconds(20)) {
                $0["MainPID"] != first["MainPID"] && $0["MainPID"] != "0" && $0["ActiveState"] == "active"
            }
            let restarted = try await system.show(Self.unit, ["NRestarts"])
            #expect(Int(restarted["NRestarts"] ?? "") ?? 0 > Int(first["NRestarts"] ?? "") ?? 0, "systemd restarted it: \(first) then \(restarted)")
            let invocation = try await Self.invocation(system)
            let records = try await Self.waitForJournal(system, "the next launch naming the service", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"] == "the previous run was unhealthy when it ended: flaky failed 2 times in 60s"
            }
            let exit = records.first { $0["MESSAGE"]?.contains("the previous run ended") == true }
            #expect(exit?["MESSAGE"]?.hasSuffix("the previous run ended: watchdog") == true, "\(records.prefix(20).map(SystemManager.line))")
        }
    }
}

extension IntegrationSuites.SystemManagerTests {
    // Fails on a daemon without org.apphost.Host1, or whose methods anyone may call.
    @Test("on the system bus: apphostd status lists the services, apphostd restart restarts one as root and is refused (exit 77) to an unprivileged user, and busctl introspect shows Host1")
    func statusAndRestartOnTheSystemBus() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let onBus = try await eventually(timeout: .seconds(20), every: .milliseconds(100)) {
            try await system.run(["busctl", "status", "org.apphost.apphostd"]).succeeded
        }
        #expect(onBus, "the daemon's name never came on the system bus")
        let status = try await system.run(["/usr/local/bin/apphostd", "status"])
        #expect(status.succeeded, "\(status)")
        #expect(status.stdout.hasPrefix("● apphostd: active · 4 services"), "\(status.stdout)")
        for service in ["logger", "analytics", "session-lock", "notification"] {
            #expect(status.stdout.split(separator: "\n").contains { $0.hasPrefix("● \(service)") && $0.contains("running") }, "\(service): \(status.stdout)")
        }

        let cursor = try await system.journalCursor()
        let restart = try await system.run(["/usr/local/bin/apphostd", "restart", "notification"], timeout: .seconds(120))
        #expect(restart.succeeded && restart.stdout == "notification restarted\n", "\(restart)")
        try await Self.waitForJournal(system, "the restart in the journal", matches: ["-u", Self.unit], after: cursor) {
            $0["MESSAGE"] == "notification restarted (1 in this run)" && $0["SERVICE"] == "notification"
        }

        let refused = try await system.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/local/bin/apphostd", "restart", "notification"])
        #expect(refused.status == 77, "\(refused)")
        #expect(refused.stderr.contains("refused: only root or the daemon's user may do this on the system bus"), "\(refused)")
        let read = try await system.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/local/bin/apphostd", "status", "--json"])
        #expect(read.succeeded && read.stdout.contains("\"state\":\"active\""), "anyone may read: \(read)")

        let introspect = try await system.run(["busctl", "introspect", "org.apphost.apphostd", "/org/apphost/Host", "org.apphost.Host1"])
        #expect(introspect.succeeded && introspect.stdout.contains(".RestartService") && introspect.stdout.contains("a(ssbssusts)"), "\(introspect)")
    }
}

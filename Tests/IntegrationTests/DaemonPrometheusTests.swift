import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// The metrics textfile as a fleet sees it: the daemon under the user manager writes it,
    /// Debian's node_exporter reads it, Prometheus scrapes it, and PromQL answers what was done.
    @Suite(.serialized)
    struct DaemonPrometheusTests {
        static var problem: String? {
            IntegrationEnvironment.daemonProblem ?? PrometheusStack.problem
        }

        @Test(
            "background, foreground, a memory warning, a refused reload, an overrun, a SIGKILL and the restart: Prometheus' answers match, node_textfile_scrape_error stays 0",
            .enabled(if: problem == nil, "needs the daemon scenarios' sandbox and Debian's prometheus and prometheus-node-exporter (reason printed)")
        )
        func prometheusSeesWhatWasDone() async throws {
            let slow = ProbeSpec("slow", deadline: "100ms", faults: [.init(hook: "didEnterBackground", action: "block", duration: "300ms")])
            try await DaemonUnderTest.with(services: [ProbeSpec("fast"), slow], extraServices: ["  - analytics"], unit: { unit, workDirectory in
                unit.restart = "on-failure"
                unit.extraServiceLines += ["RestartSec=200ms", "ExecStopPost=\(unit.binary) record-exit --config \(unit.configPath)"]
            }) { daemon in
                let textfiles = daemon.workDirectory + "/textfiles"
                try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
                let host = ["metrics:", "  textfile: \(textfiles)/kiosk.prom"]
                try daemon.writeConfig(services: [ProbeSpec("fast"), slow], extraServices: ["  - analytics"], host: host)
                try await PrometheusStack.with(textfileDirectory: textfiles, in: daemon.workDirectory + "/prometheus") { prometheus in
                    /// Waits until PromQL `query` has the single value `expected`.
                    func expect(_ query: String, _ expected: Double, _ what: String) async throws {
                        let seen = try await eventually(timeout: .seconds(30), every: .milliseconds(250)) {
                            try await prometheus.value(query) == expected
                        }
                        if !seen {
                            let last = try await prometheus.query(query).map { "\($0.labels) \($0.value)" }
                            Issue.record("\(what): \(query) never became \(expected); last answer \(last)\n\(await daemon.diagnostics())\n\(prometheus.logs)")
                            throw HarnessError("\(what) not seen")
                        }
                    }

                    try await daemon.startOrFail()
                    try await expect(#"apphost_state{daemon="kiosk",state="active"}"#, 1, "the launch")
                    try await expect(#"apphost_info{daemon="kiosk"}"#, 1, "the info series")
                    try await expect(#"apphost_services{daemon="kiosk",status="running"}"#, 3, "three services")
                    try await expect(#"apphost_launches_total{daemon="kiosk"}"#, 1, "one launch")

                    try await daemon.signal("SIGUSR1")
                    try await daemon.waitForState("background")
                    try await expect(#"apphost_state{daemon="kiosk",state="background"}"#, 1, "the background")
                    try await expect(#"apphost_state{daemon="kiosk",state="active"}"#, 0, "not active")
                    try await expect(#"apphost_transitions_total{daemon="kiosk",to="background"}"#, 1, "one move to the background")
                    try await expect(#"apphost_hook_overruns_total{daemon="kiosk",service="slow"}"#, 1, "slow's overrun")
                    try await expect(#"apphost_hook_overruns_total{daemon="kiosk",service="fast"}"#, 0, "no overrun of fast")

                    try await daemon.signal("SIGUSR1")
                    try await daemon.waitForState("active")
                    try await expect(#"apphost_transitions_total{daemon="kiosk",to="foreground"}"#, 1, "one return to the foreground")
                    try await daemon.signal("SIGRTMIN+18")
                    try await expect(#"apphost_memory_warnings_total{daemon="kiosk",level="critical"}"#, 1, "the memory warning")
                    try await expect(#"apphost_hook_duration_seconds_count{daemon="kiosk",service="fast",hook="applicationDidReceiveMemoryWarning"}"#, 1, "fast's memory-warning hook timed")

                    try daemon.writeConfig(text: "services:\n  - nosuchservice\n")
                    _ = try await daemon.reload()
                    try await expect(#"apphost_reloads_total{daemon="kiosk",result="refused"}"#, 1, "the refused reload")
                    try daemon.writeConfig(services: [ProbeSpec("fast"), slow], extraServices: ["  - analytics"], host: host)

                    let killed = try await daemon.mainPID()
                    let kill = try await daemon.sandbox.systemctl("kill", "--kill-who=main", "-s", "SIGKILL", daemon.unitName)
                    #expect(kill.succeeded, "\(kill)")
                    try await daemon.waitUntil("the restart after SIGKILL", timeout: .seconds(20), whileRunning: false) {
                        let pid = try await daemon.mainPID()
                        guard pid != 0, pid != killed else { return false }
                        return try await daemon.stateWord() == "active"
                    }
                    try await expect(#"apphost_launches_total{daemon="kiosk"}"#, 2, "the second launch, counted on from the first")
                    try await expect(#"apphost_exits_total{daemon="kiosk",cause="signal"}"#, 1, "the SIGKILL, by cause")
                    try await expect(#"apphost_transitions_total{daemon="kiosk",to="background"}"#, 1, "transitions kept across the restart")
                    try await expect(#"apphost_state{daemon="kiosk",state="active"}"#, 1, "active again")

                    let stop = try await daemon.stop()
                    #expect(stop.succeeded, "\(stop)")
                    try await expect(#"apphost_state{daemon="kiosk",state="notRunning"}"#, 1, "the stopped daemon, as its last write says")
                    try await expect(#"max_over_time(node_textfile_scrape_error[5m])"#, 0, "no scrape error all along")
                    #expect(try await prometheus.value(#"count(apphost_info)"#) == 1)
                }
            }
        }
    }
}

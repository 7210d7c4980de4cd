import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// Analytics' data promises, checked by ending a real `apphostd` process: nothing recorded
    /// before a SIGTERM (`systemctl stop`) is lost; after a SIGKILL at a random moment during a
    /// stream of transitions the files still read (`apphostd analytics --json` exits 0 with valid
    /// JSON), and the counts never go backwards from what was flushed, nor count anything twice.
    @Suite(.serialized)
    struct DaemonAnalyticsDurabilityTests {
        static let signalNumbers: [String: Int32] = [
            "SIGRTMIN+1": __libc_current_sigrtmin() + 1,
            "SIGRTMIN+2": __libc_current_sigrtmin() + 2,
            "SIGRTMIN+18": __libc_current_sigrtmin() + 18,
        ]

        /// An analytics-only config; `flushInterval` long means only hooks flush.
        static func config(flushInterval: String, compactAfter: String, stateDirectory: String? = nil) -> String {
            var lines = ["host:", "  log-level: info", "  memory-pressure:", "    enabled: false"]
            if let stateDirectory { lines.append("  state-directory: \(stateDirectory)") }
            lines += [
                "services:",
                "  - name: analytics",
                "    type: analytics",
                "    required: true",
                "    settings:",
                "      flush-interval: \(flushInterval)",
                "      compact-after: \(compactAfter)",
            ]
            return lines.joined(separator: "\n") + "\n"
        }

        @Test(
            "SIGTERM loses nothing: events not yet flushed when systemctl stop arrives (a foreground return, reloads) are in the report",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func sigtermLosesNothing() async throws {
            try await DaemonUnderTest.with(services: []) { daemon in
                try daemon.writeConfig(text: Self.config(flushInterval: "1h", compactAfter: "64KiB"))
                try await daemon.startOrFail()
                let state = daemon.stateDirectory
                for _ in 0..<3 {
                    try await daemon.signal("SIGRTMIN+1")
                    try await daemon.waitForState("background")
                    try await daemon.signal("SIGRTMIN+2")
                    try await daemon.waitForState("active")
                }
                // Memory warnings flush: wait for the flush itself.
                try await daemon.signal("SIGRTMIN+18")
                try await daemon.signal("SIGRTMIN+18")
                try await daemon.waitUntil("both memory warnings are flushed") {
                    try await AnalyticsCounts.read(stateDirectory: state).memoryWarnings.critical == 2
                }
                // Events that only the terminate flush writes: a return to the foreground and a reload.
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                let reload = try await daemon.reload()
                #expect(reload.succeeded, "\(reload)")
                try await daemon.waitUntil("the reload is done") {
                    try await daemon.daemonRecords().contains { $0["MESSAGE"]?.hasPrefix("reloaded ") == true }
                }
                let before = try await AnalyticsCounts.read(stateDirectory: state)
                // The scenario's premise: these are still only in memory.
                #expect(before.foregroundEntries == 3 && before.reloads == 0 && before.terminations == 0,
                        "expected the last foreground and the reload to be unflushed before the stop: \(before)")

                // A reload immediately followed by the stop: SIGHUP is handled first, then SIGTERM.
                let lastReload = try await daemon.reload()
                #expect(lastReload.succeeded, "\(lastReload)")
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                let stopDiagnostics = await daemon.diagnostics()
                #expect(daemon.lastExit == "success exited 0", "not a clean exit: \(stopDiagnostics)")

                let after = try await AnalyticsCounts.read(stateDirectory: state)
                #expect(after.launches == 1 && after.firstLaunches == 1, "\(after)")
                #expect(after.backgroundEntries == 4 && after.foregroundEntries == 4 && after.transitions == 8, "\(after)")
                #expect(after.memoryWarnings.critical == 2 && after.memoryWarnings.warning == 0, "\(after)")
                #expect(after.reloads == 2, "a reload before the stop was lost: \(after)")
                #expect(after.terminations == 1, "\(after)")
                #expect(after.foregroundSeconds > 0 && after.backgroundSeconds > 0, "\(after)")

                // The next launch knows the previous exit was clean.
                try await daemon.startOrFail()
                let stopAgain = try await daemon.stop()
                #expect(stopAgain.succeeded, "\(stopAgain)")
                let second = try await AnalyticsCounts.read(stateDirectory: state)
                #expect(second.launches == 2 && second.firstLaunches == 1 && second.cleanPreviousExits == 1 && second.uncleanPreviousExits == 0, "\(second)")
                #expect(second.terminations == 2 && second.reloads == 2 && second.backgroundEntries == 4, "\(second)")
            }
        }

        @Test(
            "SIGKILL at random moments (60 times) during a stream of transitions: the report always reads, counts never go back or double",
            // Runs the binary directly (no sandbox, no root): killing and restarting 60 times is much
            // faster without systemctl round trips, and the promise is about the files, not systemd.
            .enabled(
                if: IntegrationEnvironment.apphostdBinary != nil && ProcessInfo.processInfo.environment["APPHOSTD_SKIP_INTEGRATION"] != "1",
                "needs the apphostd binary next to the tests or in APPHOSTD_BINARY (and APPHOSTD_SKIP_INTEGRATION unset)"
            )
        )
        func sigkillKeepsAReadableMonotonicReport() async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let directory = try makeTemporaryDirectory("apphostd-kill")
            var keep = true
            defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
            let stateDirectory = directory + "/state"
            let configPath = directory + "/apphostd.yaml"
            // A 10ms interval and a 1KiB compaction threshold: timer flushes and compactions
            // (summary written, then the log truncated) happen all the time, so kills land in them.
            try Self.config(flushInterval: "10ms", compactAfter: "1KiB", stateDirectory: stateDirectory)
                .write(toFile: configPath, atomically: true, encoding: .utf8)
            let notify = try DatagramReceiver(directory + "/notify")
            defer { notify.close() }

            let clock = ContinuousClock()
            let began = clock.now
            var generator = SystemRandomNumberGenerator()
            var previous = try await AnalyticsCounts.read(stateDirectory: stateDirectory, binary: binary)
            let pattern = ["SIGRTMIN+1", "SIGRTMIN+2", "SIGRTMIN+1", "SIGRTMIN+18", "SIGRTMIN+2"]
            let iterations = 60
            var killedDuringLaunch = 0
            var totalTransitions = 0
            for iteration in 0..<iterations {
                let logPath = directory + "/run-\(iteration).log"
                let process = try DirectDaemon.spawn(binary: binary, arguments: ["run", "--config", configPath], notifySocket: notify.notifySocket, logPath: logPath)
                var statuses: [String] = []
                var ready = false
                var criticalSent = 0
                // One run in five is killed during launch, before or around READY=1.
                let duringLaunch = iteration % 5 == 4
                if duringLaunch {
                    killedDuringLaunch += 1
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...60, using: &generator)))
                } else {
                    let readyBy = clock.now + .seconds(15)
                    while !ready, clock.now < readyBy, process.isRunning {
                        let messages = notify.receiveAll().map(DatagramReceiver.fields)
                        ready = messages.contains { $0["READY"] == "1" }
                        statuses += messages.compactMap { $0["STATUS"] }
                        if !ready { try await Task.sleep(for: .milliseconds(1)) }
                    }
                    if !ready {
                        process.kill(SIGKILL)
                        _ = process.reap()
                        throw HarnessError("run \(iteration): no READY=1 within 15s (or it exited)\n\(Self.tail(logPath))")
                    }
                    // The stream: a signal every ~2ms until a random moment, then SIGKILL.
                    let killAt = clock.now + .milliseconds(Int.random(in: 0...250, using: &generator))
                    var next = 0
                    while clock.now < killAt {
                        let name = pattern[next % pattern.count]
                        next += 1
                        process.kill(Self.signalNumbers[name]!)
                        if name == "SIGRTMIN+18" { criticalSent += 1 }
                        statuses += notify.receiveAll().compactMap { DatagramReceiver.fields($0)["STATUS"] }
                        try await Task.sleep(for: .milliseconds(2))
                    }
                }
                process.kill(SIGKILL)
                let status = process.reap()
                // Whatever the daemon sent before it died is queued on our socket.
                statuses += notify.receiveAll().compactMap { DatagramReceiver.fields($0)["STATUS"] }
                let context = "run \(iteration) (killed during launch: \(duringLaunch), \(status)), statuses \(statuses)\nfiles kept in \(directory)\n\(Self.tail(logPath))"
                #expect(status == .signaled(SIGKILL), "\(context)")

                // The report still reads.
                let result = try await AnalyticsCounts.run(stateDirectory: stateDirectory, binary: binary)
                try #require(result.succeeded, "apphostd analytics after SIGKILL: \(result)\n\(context)")
                let report: AnalyticsCounts
                do {
                    report = try AnalyticsCounts.decode(result.stdout)
                } catch {
                    Issue.record("apphostd analytics --json printed no valid report after SIGKILL: \(error)\n\(result.stdout)\n\(context)")
                    return
                }

                // What the STATUS= lines prove was flushed: each background entry was flushed (with
                // everything before it) before its STATUS= was sent. At most one more transition can
                // be flushed without its STATUS= having gone out.
                let states = statuses.map(DaemonUnderTest.stateWord(of:))
                let backgrounds = states.filter { $0 == "background" }.count
                let lastBackground = states.lastIndex(of: "background")
                let foregrounds = Self.returns(in: states[...])
                let foregroundsBeforeLastBackground = lastBackground.map { Self.returns(in: states[..<$0]) } ?? 0
                totalTransitions += backgrounds + foregrounds
                let checks: [(String, Bool)] = [
                    ("launches within [+\(backgrounds > 0 ? 1 : 0), +1]", report.launches >= previous.launches + (backgrounds > 0 ? 1 : 0) && report.launches <= previous.launches + 1),
                    ("backgroundEntries within [+\(backgrounds), +\(backgrounds + 1)]", report.backgroundEntries >= previous.backgroundEntries + backgrounds && report.backgroundEntries <= previous.backgroundEntries + backgrounds + 1),
                    ("foregroundEntries within [+\(foregroundsBeforeLastBackground), +\(foregrounds + 1)]", report.foregroundEntries >= previous.foregroundEntries + foregroundsBeforeLastBackground && report.foregroundEntries <= previous.foregroundEntries + foregrounds + 1),
                    ("critical warnings within [+0, +\(criticalSent)]", report.memoryWarnings.critical >= previous.memoryWarnings.critical && report.memoryWarnings.critical <= previous.memoryWarnings.critical + criticalSent),
                    ("no warnings of level warning", report.memoryWarnings.warning == 0),
                    ("no terminations", report.terminations == previous.terminations),
                    ("at most one first launch", report.firstLaunches <= 1 && report.firstLaunches >= previous.firstLaunches),
                    ("previous exits never go back", report.cleanPreviousExits >= previous.cleanPreviousExits && report.uncleanPreviousExits >= previous.uncleanPreviousExits),
                    ("times never go back", report.foregroundSeconds >= previous.foregroundSeconds - 1e-6 && report.backgroundSeconds >= previous.backgroundSeconds - 1e-6),
                    ("sequence never goes back", report.lastSequence >= previous.lastSequence),
                ]
                for (what, holds) in checks where !holds {
                    Issue.record("after SIGKILL #\(iteration + 1): \(what) failed\nbefore: \(previous)\nafter:  \(report)\n\(context)")
                }
                if checks.contains(where: { !$0.1 }) { return }
                previous = report
            }

            // A clean run over what the kills left: starts, counts an unclean previous exit, and a
            // SIGTERM flushes its launch and termination.
            let logPath = directory + "/final.log"
            let process = try DirectDaemon.spawn(binary: binary, arguments: ["run", "--config", configPath], notifySocket: notify.notifySocket, logPath: logPath)
            var ready = false
            let readyBy = clock.now + .seconds(15)
            while !ready, clock.now < readyBy, process.isRunning {
                ready = notify.receiveAll().contains { DatagramReceiver.fields($0)["READY"] == "1" }
                if !ready { try await Task.sleep(for: .milliseconds(1)) }
            }
            process.kill(SIGTERM)
            let status = process.reap()
            #expect(ready && status == .exited(0), "final run: ready \(ready), wait status \(status)\n\(Self.tail(logPath))")
            let final = try await AnalyticsCounts.read(stateDirectory: stateDirectory, binary: binary)
            #expect(final.launches == previous.launches + 1, "before: \(previous)\nafter:  \(final)")
            #expect(final.uncleanPreviousExits == previous.uncleanPreviousExits + 1, "the killed run was not seen as an unclean exit: \(final)")
            #expect(final.terminations == previous.terminations + 1, "\(final)")
            #expect(final.lastSequence > previous.lastSequence, "\(final)")

            let logs = (0..<iterations).map { Self.tail(directory + "/run-\($0).log", lines: 1000) }
            let recoveries = logs.filter { $0.contains("dropped a torn or corrupt tail") }.count
            print("IntegrationTests: \(iterations) SIGKILLs (\(killedDuringLaunch) during launch), \(totalTransitions) transitions seen, \(recoveries) torn tails recovered, compacted summary present: \(FileManager.default.fileExists(atPath: stateDirectory + "/analytics/summary.json")); took \(clock.now - began)")
            #expect(final.transitions > 0, "the stream never got a transition through: \(final)")
            keep = false
        }

        /// Returns to the foreground in a sequence of state words: an `active` after a `background`.
        static func returns(in states: ArraySlice<String>) -> Int {
            var count = 0
            var inBackground = false
            for state in states {
                if state == "background" { inBackground = true }
                if state == "active", inBackground { count += 1; inBackground = false }
            }
            return count
        }

        static func tail(_ path: String, lines: Int = 15) -> String {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "(no log at \(path))"
            return "--- \(path):\n" + text.split(separator: "\n").suffix(lines).joined(separator: "\n")
        }
    }
}

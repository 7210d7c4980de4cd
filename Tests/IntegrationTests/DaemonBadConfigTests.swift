import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// The bad-config corpus against the real `apphostd` binary (issue 5, "Reliability"): every
    /// broken file — the corpus in `Tests/AppHostDaemonTests/BadConfigs` plus the kinds that cannot live
    /// in git (huge, symlink loop, unreadable, missing, directory, FIFO) and settings errors of the
    /// real services — makes `apphostd run` exit 78 (EX_CONFIG) with a message naming the problem;
    /// under systemd the unit fails with `ExecMainStatus=78` and the message in `StatusText`; and a
    /// running daemon that is reloaded with each of them keeps its old config running (same
    /// process, same state, services still answer), says "reload failed" in `StatusText` and names
    /// the problem in the journal.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonBadConfigTests {
        // MARK: Start, without systemd

        @Test("the corpus has at least 30 files and every manifest row has a file")
        func corpusIsComplete() throws {
            let files = try FileManager.default.contentsOfDirectory(atPath: Self.corpusDirectory).filter { $0.hasSuffix(".yaml") }
            #expect(Self.corpus.count >= 30, "only \(Self.corpus.count) corpus rows in \(Self.corpusDirectory)/expected.txt")
            #expect(Set(files) == Set(Self.corpus.map(\.name)), "corpus files and manifest rows differ")
            for file in Self.daemonWording.keys {
                #expect(files.contains(file), "daemonWording names \(file), which is not in the corpus any more")
            }
        }

        @Test("apphostd run with a bad config exits 78 and its message names the file and the problem", arguments: all)
        func startExits78(_ badCase: Case) async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let directory = try makeTemporaryDirectory("apphostd-badconfig")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/apphostd.yaml"
            try badCase.install(at: path)
            var argv = [binary, "run", "--config", path]
            if case .unreadable = badCase.content, geteuid() == 0 {
                // Root reads a mode-000 file through CAP_DAC_OVERRIDE; a daemon under a hardened
                // unit (empty CapabilityBoundingSet=) has no such capability. Run it like that.
                guard let setpriv = ProcessRunner.resolve("setpriv") else {
                    print("IntegrationTests: skipped the unreadable case: running as root and setpriv (util-linux) is missing")
                    return
                }
                argv = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"] + argv
            }
            let result = try await ProcessRunner.run(argv, timeout: .seconds(20))
            #expect(result.status == 78, "\(badCase.name): \(result)")
            #expect(result.stderr.contains(badCase.expected), "\(badCase.name): the message does not name the problem (\(badCase.expected)): \(result)")
            #expect(result.stderr.contains(path), "\(badCase.name): the message does not name the file: \(result)")
        }

        /// A file with five problems in different places.
        static let manyProblems = """
            host:
              hook-deadlin: 5s
              launch-deadline: 5 seconds
            services:
              - probe
              - name: p2
                type: probe
                settings:
                  colour: blue
              - type: nosuch
              - probe
            """

        @Test("every problem of a file comes out at once, each with its line: at start, and on reload in the journal and StatusText")
        func everyProblemAtOnce() async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let directory = try makeTemporaryDirectory("apphostd-badconfig")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/apphostd.yaml"
            try Self.manyProblems.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try await ProcessRunner.run([binary, "run", "--config", path], timeout: .seconds(20))
            #expect(result.status == 78, "\(result)")
            for located in ["\(path):2: host.hook-deadlin", "\(path):3: host.launch-deadline", "\(path):9: services[1].settings.colour",
                            "\(path):10: services[2].type", "\(path):11: services[3]", "5 problems in \(path)"] {
                #expect(result.stderr.contains(located), "missing \(located): \(result)")
            }

            try await DaemonUnderTest.with(services: [ProbeSpec("a")]) { daemon in
                try await daemon.startOrFail()
                try daemon.writeConfig(text: Self.manyProblems)
                _ = try await daemon.reload()
                try await daemon.waitUntil("StatusText says the reload failed, with the count") {
                    try await daemon.status()["StatusText"]?.contains("reload failed: \(daemon.configPath):2: host.hook-deadlin") == true
                }
                let statusText = try await daemon.status()["StatusText"] ?? ""
                #expect(statusText.contains("(and 4 more problems)"), "\(statusText)")
                var refusals: [String] = []
                try await daemon.waitUntil("one error record per problem in the journal") {
                    refusals = try await daemon.sandbox.journal(["_SYSTEMD_USER_UNIT=\(daemon.unitName)", "SYSLOG_IDENTIFIER=apphostd", "PRIORITY=3"])
                        .compactMap { $0["MESSAGE"] }
                        .filter { $0.hasPrefix("reload refused") }
                    return refusals.count >= 5
                }
                #expect(refusals.count == 5, "\(refusals)")
                #expect(refusals.last?.contains("\(daemon.configPath):11: services[3]") == true, "\(refusals)")
            }
        }

        // MARK: Start, under systemd

        @Test("under systemd a bad config at start fails the unit with ExecMainStatus=78 and the message in StatusText and the journal")
        func startUnderSystemdFails78() async throws {
            let badCase = try #require(Self.corpus.first { $0.name == "unknown-service-shorthand.yaml" })
            try await DaemonUnderTest.with(services: [ProbeSpec("probe")]) { daemon in
                try badCase.install(at: daemon.configPath)
                let start = try await daemon.start()
                #expect(!start.succeeded, "start succeeded with a bad config: \(start)")
                let (status, diagnostics) = try await daemon.failedStart()
                daemon.expectExited(with: 78, (status, diagnostics))
                let statusText = status["StatusText"] ?? ""
                #expect(statusText.hasPrefix("bad configuration: ") && statusText.contains(badCase.expected) && statusText.contains(daemon.configPath),
                        "StatusText does not carry the message: \(diagnostics)")
                #expect(try await daemon.journal().contains { record in
                    (record["MESSAGE"] ?? "").contains(badCase.expected) && (Int(record["PRIORITY"] ?? "") ?? 7) <= 3
                }, "no error record with the message:\n\(diagnostics)")
                #expect(daemon.probeLog.entries.isEmpty, "a service ran with a bad config: \(daemon.probeLog)")
            }
        }

        // MARK: Reload

        @Test("reload with each bad config keeps the old config running, says reload failed in StatusText and names the problem in the journal")
        func reloadKeepsOldConfig() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b")], unit: { unit, _ in
                // Like the shipped unit, which has no capabilities at all: without these root
                // cannot read a mode-000 file either, so the unreadable case is real.
                unit.extraServiceLines.append("CapabilityBoundingSet=~CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH")
            }) { daemon in
                try await daemon.startOrFail()
                let pid = try await daemon.mainPID()
                let good = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
                let launched = daemon.probeLog.entries
                let clock = ContinuousClock()
                let began = clock.now

                func refusals() async throws -> [String] {
                    try await daemon.sandbox.journal(["_SYSTEMD_USER_UNIT=\(daemon.unitName)", "SYSLOG_IDENTIFIER=apphostd", "PRIORITY=3"])
                        .compactMap { $0["MESSAGE"] }
                        .filter { $0.hasPrefix("reload refused") }
                }

                var seen = try await refusals().count
                for badCase in Self.all {
                    do {
                        try badCase.install(at: daemon.configPath)
                        // ExecReload= (apphostd reload) waits for the daemon's answer: a refused
                        // config fails `systemctl reload`, and the refusal is already logged.
                        let reload = try await daemon.reload()
                        #expect(!reload.succeeded, "\(badCase.name): systemctl reload succeeded for a config the daemon refused: \(reload)")
                        var newest = ""
                        try await daemon.waitUntil("\(badCase.name): the refusal is in the journal", timeout: .seconds(10)) {
                            let records = try await refusals()
                            guard records.count > seen else { return false }
                            newest = records.last ?? ""
                            return true
                        }
                        seen += 1
                        #expect(newest.contains(badCase.expected) && newest.contains(daemon.configPath),
                                "\(badCase.name): the journal does not name the problem (\(badCase.expected)): \(newest)")
                        var statusText = ""
                        try await daemon.waitUntil("\(badCase.name): StatusText says the reload failed", timeout: .seconds(10)) {
                            statusText = try await daemon.status()["StatusText"] ?? ""
                            return statusText.contains("reload failed") && statusText.contains(badCase.expected)
                        }
                        #expect(statusText.hasPrefix("active · 2 services"), "\(badCase.name): StatusText: \(statusText)")
                        let status = try await daemon.status()
                        #expect(status["ActiveState"] == "active" && status["MainPID"] == "\(pid)", "\(badCase.name): \(status)")
                    } catch {
                        Issue.record("\(badCase.name): \(error)")
                    }
                }
                print("IntegrationTests: \(Self.all.count) bad reloads took \(clock.now - began)")
                Case.remove(daemon.configPath + ".other")

                // Nothing happened to the services: no terminate, no relaunch, and they still answer.
                #expect(daemon.probeLog.entries == launched, "a bad reload reached the services: \(daemon.probeLog)")
                #expect(try await daemon.stateWord() == "active")
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.waitUntil("both services entered the background") {
                    let log = daemon.probeLog
                    return log.contains("a", "didEnterBackground") && log.contains("b", "didEnterBackground")
                }
                #expect(try await daemon.mainPID() == pid, "the daemon restarted")

                // The good file again: the remark goes away.
                try daemon.writeConfig(text: good)
                _ = try await daemon.reload()
                try await daemon.waitUntil("a good reload clears the remark") {
                    try await daemon.status()["StatusText"]?.contains("reload failed") == false
                }
            }
        }
    }
}

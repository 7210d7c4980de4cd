import AppHost
import AppHostSystemd
import AppHostTestSupport
import AppHostServices
import Dispatch
import Foundation
import Logging
import AppHostTestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs its jobs on a dispatch thread with every signal blocked, the way a daemon thread looks
/// after the prelude blocked the lifecycle signals: a child spawned from here would inherit the
/// mask unless the spawner resets it.
final class SignalsBlockedExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "signals-blocked")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async {
            var all = sigset_t()
            var previous = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, &previous)
            job.runSynchronously(on: self.asUnownedTaskExecutor())
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
    }
}

@Suite("exec")
struct ExecServiceTests {
    static func descriptor(_ name: String, _ settings: [String: SettingValue], isRequired: Bool = true) -> ServiceDescriptor {
        ServiceDescriptor(name: name, type: ExecService.typeName, isRequired: isRequired, configuration: ServiceSection(settings), registry: BuiltinServices.registry())
    }

    static func settings(_ arguments: [String], timeout: Duration = .seconds(5)) throws -> ExecService.Settings {
        var settings = try ExecService.parse(ServiceSection(["on": .array([.string("willTerminate")]), "run": .array(arguments.map(SettingValue.string))]))
        settings.timeout = timeout
        return settings
    }

    @Test func runsTheProgramOnChosenEventsWithItsEnvironment() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/events.txt"
        let capture = CapturedLogs()
        let script = "echo \"$APPHOST_EVENT $APPHOST_STATE $APPHOST_SERVICE $APPHOST_LAUNCH_COUNT $EXTRA $(pwd)\" >> \(output); echo to-stdout; echo to-stderr >&2"
        let host = try PluggableApplicationHost(
            services: [Self.descriptor("hook", [
                "on": .array([.string("didEnterBackground"), .string("didReceiveMemoryWarning"), .string("willTerminate")]),
                "run": .array([.string("sh"), .string("-c"), .string(script)]),
                "environment": .table(["EXTRA": .string("extra value")]),
                "working-directory": .string(directory),
            ])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"),
            logger: capture.logger()
        )
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            try await host.enterForeground()
            try await host.receiveMemoryWarning(level: .critical)
        }
        #expect(readLines(output) == [
            "didEnterBackground background hook 1 extra value \(directory)",
            "didReceiveMemoryWarning.critical active hook 1 extra value \(directory)",
            "willTerminate terminating hook 1 extra value \(directory)",
        ])
        let lines = capture.all.filter { $0.metadata["stream"] != nil }
        #expect(lines.filter { $0.metadata["stream"] == "stdout" }.map(\.message) == Array(repeating: "to-stdout", count: 3))
        #expect(lines.filter { $0.metadata["stream"] == "stderr" }.allSatisfy { $0.message == "to-stderr" && $0.level == .warning })
        #expect(lines.filter { $0.metadata["stream"] == "stderr" }.count == 3)
    }

    @Test("on significantTimeChange the program gets APPHOST_TIME_CHANGE, the causes as the request's; on other events none")
    func aTimeChangeNamesItsCauses() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/events.txt"
        let script = "echo \"$APPHOST_EVENT ${APPHOST_TIME_CHANGE-unset}\" >> \(output)"
        let host = try PluggableApplicationHost(
            services: [Self.descriptor("hook", [
                "on": .array([.string("significantTimeChange"), .string("didEnterBackground")]),
                "run": .array([.string("sh"), .string("-c"), .string(script)]),
            ])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"),
            logger: CapturedLogs().logger()
        )
        try await host.withRunning {
            try await host.launched()
            try await host.receiveSignificantTimeChange(.timezone)
            try await host.enterBackground()
            try await host.receiveSignificantTimeChange([.clock, .daylightSaving])
        }
        #expect(readLines(output) == ["significantTimeChange timezone", "didEnterBackground unset", "significantTimeChange clock,daylight-saving"])
    }

    @Test func aNonZeroExitIsAWarningWithItsCode() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = CapturedLogs()
        let host = try PluggableApplicationHost(
            services: [Self.descriptor("failing", ["on": .array([.string("didEnterBackground")]), "run": .array([.string("/bin/sh"), .string("-c"), .string("exit 3")])])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"),
            logger: capture.logger()
        )
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
        }
        let warning = try #require(capture.all.first { $0.metadata["exit_code"] != nil })
        #expect(warning.metadata["exit_code"] == "3")
        #expect(warning.level == .warning)
        #expect(warning.message.contains("exited with status 3 on didEnterBackground"))
    }

    @Test func aMissingProgramFailsTheLaunchClearly() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let host = try PluggableApplicationHost(
            services: [Self.descriptor("missing", ["on": .array([.string("willTerminate")]), "run": .array([.string("apphost-no-such-program")])])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state")
        )
        try await host.withRunning {
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect("\(failure.map { "\($0)" } ?? "")".contains("\"apphost-no-such-program\" was not found on PATH"))
        }
        #expect(throws: ExecService.Failure.self) { try ExecService.resolve("/nonexistent/program") }
        #expect(try ExecService.resolve("sh", path: "/nonexistent:/bin:/usr/bin").hasSuffix("/sh"))
    }

    @Test func reloadSwitchesProgramAndEventsLive() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/events.txt"
        func settings(_ events: [String], _ word: String) -> [String: SettingValue] {
            ["on": .array(events.map(SettingValue.string)), "run": .array([.string("/bin/sh"), .string("-c"), .string("echo \(word) $APPHOST_EVENT >> \(output)")])]
        }
        let host = try PluggableApplicationHost(services: [Self.descriptor("hook", settings(["didEnterBackground"], "old"))], configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"))
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            let report = try await host.reload([Self.descriptor("hook", settings(["didUpdateConfiguration", "willEnterForeground"], "new"))])
            #expect(report.updated == ["hook"])
            try await host.enterForeground()
        }
        #expect(readLines(output) == ["old didEnterBackground", "new didUpdateConfiguration", "new willEnterForeground"])
    }

    @Test func theTimeoutTerminatesTheProgram() async throws {
        let started = ContinuousClock.now
        let outcome = try await ExecService.execute(executable: "/bin/sleep", settings: try Self.settings(["sleep", "30"], timeout: .milliseconds(300)), environment: [:], logger: Logger(label: "test"), event: "test")
        let elapsed = ContinuousClock.now - started
        #expect(outcome.timedOut)
        #expect(outcome.signal == SIGTERM)
        // SIGTERM (not the grace's SIGKILL) shows the program died of the timeout; the bound is
        // generous so a loaded machine does not flake it (2.9 s seen on 2 busy cores).
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(15))
    }

    @Test func aProgramIgnoringSIGTERMIsKilledAfterTheGrace() async throws {
        let started = ContinuousClock.now
        let outcome = try await ExecService.execute(executable: "/bin/sh", settings: try Self.settings(["sh", "-c", "trap '' TERM; exec sleep 30"], timeout: .milliseconds(200)), environment: [:], logger: Logger(label: "test"), event: "test")
        let elapsed = ContinuousClock.now - started
        #expect(outcome.timedOut)
        #expect(outcome.signal == SIGKILL)
        // The upper bound only catches a grace that never ends; 5 s flaked on 2 cores busy with a
        // build beside the suite.
        #expect(elapsed >= .milliseconds(200) + .seconds(2) && elapsed < .seconds(15))
    }

    /// Processes whose command line contains `marker`.
    static func processes(running marker: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains(marker) ? pid : nil
        }
    }

    @Test("after a timeout nothing of the run is left: a background child that ignores SIGTERM dies with its group, even after the leader exited")
    func theTimeoutKillsTheWholeProcessGroup() async throws {
        let marker = "777.\(getpid())"
        defer { for pid in Self.processes(running: marker) { kill(pid, SIGKILL) } }
        let script = "(trap '' TERM; exec /bin/sleep \(marker)) & exec /bin/sleep 778"
        let outcome = try await ExecService.execute(executable: "/bin/sh", settings: try Self.settings(["sh", "-c", script], timeout: .milliseconds(300)), environment: [:], logger: Logger(label: "test"), event: "test")
        #expect(outcome.timedOut)
        var left = Self.processes(running: marker)
        // SIGKILL is sent before execute returns; the kernel may take a moment to reap.
        for _ in 0..<50 where !left.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
            left = Self.processes(running: marker).filter { pid in
                let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
                return state != "Z"
            }
        }
        #expect(left.isEmpty, "still running after the timeout: \(left)")
    }

    @Test("after a timeout a descendant that left the process group with setsid is killed too")
    func theTimeoutKillsADescendantThatLeftTheGroup() async throws {
        let marker = "779.\(getpid())"
        defer { for pid in Self.processes(running: marker) { kill(pid, SIGKILL) } }
        // setsid forks when it leads a group, so the sleeper ends up in a session of its own,
        // reparented away from the run once the shell that started it dies.
        let script = "/usr/bin/setsid /bin/sh -c \"trap '' TERM; exec /bin/sleep \(marker)\" & exec /bin/sleep 778"
        let outcome = try await ExecService.execute(executable: "/bin/sh", settings: try Self.settings(["sh", "-c", script], timeout: .milliseconds(300)), environment: [:], logger: Logger(label: "test"), event: "test")
        #expect(outcome.timedOut)
        let escaped = Self.processes(running: marker)
        for _ in 0..<50 where Self.live(Self.processes(running: marker)).count > 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.live(Self.processes(running: marker)).isEmpty, "still running after the timeout: \(escaped)")
    }

    @Test("a run that ends on its own keeps what it started in the background")
    func aRunThatEndsOnItsOwnLeavesItsBackgroundAlone() async throws {
        let marker = "780.\(getpid())"
        defer { for pid in Self.processes(running: marker) { kill(pid, SIGKILL) } }
        let script = "/usr/bin/setsid /bin/sleep \(marker) </dev/null >/dev/null 2>&1 & exit 0"
        let outcome = try await ExecService.execute(executable: "/bin/sh", settings: try Self.settings(["sh", "-c", script], timeout: .seconds(10)), environment: [:], logger: Logger(label: "test"), event: "test")
        #expect(!outcome.timedOut)
        #expect(Self.live(Self.processes(running: marker)).count == 1)
    }

    /// `pids` without zombies.
    static func live(_ pids: [pid_t]) -> [pid_t] {
        pids.filter { pid in
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
            return state != nil && state != "Z"
        }
    }

    /// The daemon blocks SIGTERM in every thread; a child must still start with an empty mask
    /// and die on SIGTERM. (`sleep` itself, not `sh`: dash clears its mask at startup.)
    @Test func aChildSpawnedFromASignalsBlockedThreadStillDiesOnSIGTERM() async throws {
        let executor = SignalsBlockedExecutor()
        let (controlMask, outcome, elapsed) = try await withTaskExecutorPreference(executor) {
            // Control: a plain posix_spawn from this thread hands the blocked mask on.
            let controlMask = Self.signalMaskOfPlainSpawn()
            let started = ContinuousClock.now
            let outcome = try await ExecService.execute(
                executable: "/bin/sleep", settings: try Self.settings(["sleep", "30"], timeout: .milliseconds(300)),
                environment: [:], logger: Logger(label: "test"), event: "test"
            )
            return (controlMask, outcome, ContinuousClock.now - started)
        }
        #expect(controlMask != nil && controlMask != "0000000000000000", "the spawning thread must block signals for this test to mean anything")
        #expect(outcome.timedOut)
        #expect(outcome.signal == SIGTERM, "SIGKILL here would mean SIGTERM was blocked in the child")
        #expect(elapsed < .seconds(15))
    }

    /// Spawns `sleep` with a plain posix_spawn, reads its `SigBlk` and kills it.
    static func signalMaskOfPlainSpawn() -> String? {
        var pid = pid_t()
        var argv: [UnsafeMutablePointer<CChar>?] = ["/bin/sleep", "30"].map { (text: String) in strdup(text) } + [nil]
        defer { argv.forEach { free($0) } }
        guard posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0 else { return nil }
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let line = readLines("/proc/\(pid)/status").first { $0.hasPrefix("SigBlk:") }
        return line.map { String($0.dropFirst("SigBlk:".count)).trimmingCharacters(in: .whitespaces) }
    }

    @Test(arguments: [
        (["run": SettingValue.array([.string("true")])], "on"),
        (["on": .array([.string("didExplode")]), "run": .array([.string("true")])], "on[0]"),
        (["on": .array([.string("willTerminate")])], "run"),
        (["on": .array([.string("willTerminate")]), "run": .array([])], "run"),
        (["on": .array([.string("willTerminate")]), "run": .string("echo hi")], "run"),
        (["on": .array([.string("willTerminate")]), "run": .array([.string("bin/tool")])], "run[0]"),
        (["on": .array([.string("willTerminate")]), "run": .array([.string("true")]), "timeout": .string("0s")], "timeout"),
        (["on": .array([.string("willTerminate")]), "run": .array([.string("true")]), "environment": .table(["APPHOST_EVENT": .string("x")])], "environment.APPHOST_EVENT"),
        (["on": .array([.string("willTerminate")]), "run": .array([.string("true")]), "environment": .table(["BAD-NAME": .string("x")])], "environment.BAD-NAME"),
        (["on": .array([.string("willTerminate")]), "run": .array([.string("true")]), "working-directory": .string("tmp")], "working-directory"),
        (["on": .array([.string("willTerminate")]), "run": .array([.string("true")]), "shell": .bool(true)], "shell"),
    ])
    func rejectsBadSettings(settings: [String: SettingValue], key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try ExecService(configuration: ServiceSection(settings, keyPath: "services[0].settings"))
        }
        #expect(error?.keyPath == "services[0].settings.\(key)")
    }
}

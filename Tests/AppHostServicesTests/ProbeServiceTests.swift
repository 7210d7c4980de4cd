import AppHost
import AppHostTestKit
import AppHostSystemd
import AppHostTestSupport
import AppHostServices
import Foundation
import Testing

/// Runs a host over `services` (so service run loops start), with its launch state and state
/// directory in `directory`/state, for the length of `body`: the body starts once the host is
/// active and drives it with the host's requests; the host is terminated when the body ends.
func withStatefulHost<Value: Sendable>(
    _ services: [ServiceDescriptor],
    directory: String,
    restorableState: (any RestorableStateStorage)? = nil,
    _ body: (PluggableApplicationHost) async throws -> Value
) async throws -> Value {
    let host = try PluggableApplicationHost(
        services: services,
        configuration: .init(hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), launchState: LaunchStateFiles(directory: directory + "/state"), restorableState: restorableState, stateDirectory: directory + "/state")
    )
    return try await host.withRunning {
        try await host.launched()
        return try await body(host)
    }
}

/// The lines of a text file, or none when it is missing.
func readLines(_ path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").map(String.init)
}

func probeDescriptor(_ name: String, _ settings: [String: SettingValue], isRequired: Bool = true) -> ServiceDescriptor {
    ServiceDescriptor(name: name, type: ProbeService.typeName, isRequired: isRequired, configuration: ServiceSection(settings), registry: BuiltinServices.registry())
}

@Suite("probe")
struct ProbeServiceTests {
    @Test("keep-state: a new state of that many bytes at every hook, given back at the next launch")
    func keepStateHoldsStateAcrossRuns() async throws {
        let storage = InMemoryRestorableStateStorage()
        let descriptor = probeDescriptor("p", ["keep-state": .int(64)])
        try await withTestHost([descriptor], configuration: .init(restorableState: storage)) { host in
            try await host.launched()
            let launched = try #require(storage.kept.all.last?.services["p"])
            try await host.enterBackground()
            let background = try #require(storage.kept.all.last?.services["p"])
            #expect(launched.count == 64 && background.count == 64 && background != launched)
        }
        let logs = CapturedLogs()
        try await withTestHost([descriptor], configuration: .init(restorableState: storage), logs: logs) { host in
            try await host.launched()
            #expect(logs.messages.contains("probe: restored 64 bytes of state"))
        }
        #expect(throws: ConfigurationError.self) { try ProbeService.parse(ServiceSection(["keep-state": .int(70000)])) }
    }

    @Test func recordsEveryHookInOrder() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = directory + "/probe.log"
        let host = try PluggableApplicationHost(
            services: [probeDescriptor("a", ["record-to": .string(record)]), probeDescriptor("b", ["record-to": .string(record)])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state")
        )
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            try await host.enterForeground()
            try await host.receiveMemoryWarning(level: .critical)
            try await host.setSessionLocked(true)
            try await host.setSessionLocked(false)
        }
        #expect(readLines(record) == [
            "a willFinishLaunching", "a didFinishLaunching", "b willFinishLaunching", "b didFinishLaunching",
            "a didBecomeActive", "b didBecomeActive",
            "b willResignActive", "a willResignActive", "b didEnterBackground", "a didEnterBackground",
            "a willEnterForeground", "b willEnterForeground", "a didBecomeActive", "b didBecomeActive",
            "a didReceiveMemoryWarning.critical", "b didReceiveMemoryWarning.critical",
            "b protectedDataWillBecomeUnavailable", "a protectedDataWillBecomeUnavailable",
            "a protectedDataDidBecomeAvailable", "b protectedDataDidBecomeAvailable",
            "b willTerminate", "a willTerminate",
        ])
    }

    @Test func refuseInRequiredLaunchRollsBack() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = directory + "/probe.log"
        let faults: SettingValue = .array([.table(["hook": .string("didFinishLaunching"), "action": .string("refuse")])])
        let host = try PluggableApplicationHost(
            services: [probeDescriptor("a", ["record-to": .string(record)]), probeDescriptor("b", ["record-to": .string(record), "faults": faults])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state")
        )
        try await host.withRunning {
            await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(readLines(record) == ["a willFinishLaunching", "a didFinishLaunching", "b willFinishLaunching", "b didFinishLaunching", "a willTerminate"])
        }
    }

    @Test func hangOverrunsAndThrowIsReported() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = directory + "/probe.log"
        let hang: SettingValue = .array([.table(["hook": .string("didEnterBackground"), "action": .string("hang"), "duration": .string("2s")])])
        let fail: SettingValue = .array([.table(["hook": .string("didReceiveMemoryWarning"), "action": .string("throw")])])
        let host = try PluggableApplicationHost(
            services: [probeDescriptor("slow", ["record-to": .string(record), "faults": hang]), probeDescriptor("fast", ["record-to": .string(record), "faults": fail])],
            configuration: .init(hookDeadline: .milliseconds(200), launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state")
        )
        try await host.withRunning {
            try await host.launched()
            let started = ContinuousClock.now
            try await host.enterBackground()
            #expect(ContinuousClock.now - started < .seconds(2))
            #expect(host.status.lastOverrun?.service == "slow")
            try await host.receiveMemoryWarning(level: .warning)
            #expect(host.status.services.first { $0.name == "fast" }?.lastError?.contains("probe fault") == true)
        }
        #expect(readLines(record).contains("fast didEnterBackground"))
    }

    @Test func blockHoldsItsThreadForTheDuration() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let faults: SettingValue = .array([.table(["hook": .string("willResignActive"), "action": .string("block"), "duration": .string("300ms")])])
        let host = try PluggableApplicationHost(
            services: [probeDescriptor("p", ["faults": faults])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state")
        )
        try await host.withRunning {
            try await host.launched()
            let started = ContinuousClock.now
            try await host.enterBackground()
            #expect(ContinuousClock.now - started >= .milliseconds(300))
        }
    }

    @Test func reloadAppliesNewFaultsLive() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = directory + "/probe.log"
        let host = try PluggableApplicationHost(services: [probeDescriptor("p", ["record-to": .string(record)])], configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"))
        try await host.withRunning {
            try await host.launched()
            let faults: SettingValue = .array([.table(["hook": .string("didEnterBackground"), "action": .string("throw")])])
            let report = try await host.reload([probeDescriptor("p", ["record-to": .string(record), "faults": faults])])
            #expect(report.updated == ["p"])
            try await host.enterBackground()
            #expect(host.status.services[0].lastError?.contains("didEnterBackground") == true)
        }
        #expect(readLines(record).contains("p didUpdateConfiguration"))
    }

    @Test(arguments: [
        (["record-to": SettingValue.string("relative.log")], "record-to"),
        (["recordTo": .string("/tmp/x")], "recordTo"),
        (["faults": .array([.table(["hook": .string("didExplode"), "action": .string("throw")])])], "faults[0].hook"),
        (["faults": .array([.table(["hook": .string("didEnterBackground"), "action": .string("refuse")])])], "faults[0].action"),
        (["faults": .array([.table(["hook": .string("didEnterBackground"), "action": .string("throw"), "duration": .string("1s")])])], "faults[0].duration"),
        (["faults": .array([.table(["hook": .string("didEnterBackground"), "action": .string("hang"), "duration": .string("soon")])])], "faults[0].duration"),
        (["faults": .array([.table(["hook": .string("run"), "action": .string("hang")])])], "faults[0].action"),
        (["faults": .array([.table(["hook": .string("didEnterBackground"), "action": .string("end")])])], "faults[0].action"),
        (["faults": .array([.table(["hook": .string("didEnterBackground"), "action": .string("throw"), "after": .string("1s")])])], "faults[0].after"),
    ])
    func rejectsBadSettings(settings: [String: SettingValue], key: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ProbeService(configuration: ServiceSection(settings, keyPath: "services[0].settings"))
        }
        #expect(error?.keyPath == "services[0].settings.\(key)")
    }

    @Test("a run fault: each start of the run loop is recorded, then it throws after `after`, and its restart policy starts it again")
    func runFaultDrillsSupervision() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = directory + "/probe.log"
        var probe = probeDescriptor("p", [
            "record-to": .string(record),
            "faults": .array([.table(["hook": .string("run"), "action": .string("throw"), "after": .string("10ms")])]),
        ])
        probe.restart = RestartPolicy(mode: .transient, delay: .milliseconds(1), intensity: 1, period: .seconds(60))
        try await withStatefulHost([probe], directory: directory) { host in
            let restarts = host.bus.subscribe(to: ServiceDidRestart.self)
            let reports = host.reports
            var iterator = restarts.makeAsyncIterator()
            #expect(await iterator.next()?.error == "probe fault injected in run")
            // The second end escalates: a required service, so the host is unhealthy.
            let unhealthy = await reports.first { report in
                if case .status(let status) = report { return status.healthProblem != nil }
                return false
            }
            guard case .status(let status)? = unhealthy else {
                Issue.record("the host never became unhealthy")
                return
            }
            #expect(status.healthProblem == "p failed 2 times in 60s")
        }
        #expect(readLines(record).filter { $0 == "p run" }.count == 2)
    }
}

import AppHost
import AppHostSystemd
import AppHostTestSupport
import AppHostServices
import Foundation
import Logging
import Synchronization
import AppHostTestKit
import Testing

@Suite("logger")
struct LoggerServiceTests {
    static func descriptor(_ settings: [String: SettingValue] = [:]) -> ServiceDescriptor {
        ServiceDescriptor(name: "logger", type: LoggerService.typeName, isRequired: true, configuration: ServiceSection(settings), registry: BuiltinServices.registry())
    }

    /// Runs a host with a logger and a slow probe through a full cycle and returns the audit records.
    static func audit(_ settings: [String: SettingValue] = [:], reloadTo newSettings: [String: SettingValue]? = nil) async throws -> [CapturedLogRecord] {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = CapturedLogs()
        let hang: SettingValue = .array([.table(["hook": .string("didEnterBackground"), "action": .string("hang"), "duration": .string("400ms")])])
        // Only the probe's hooks have the short deadline its hang overruns; the logger's, healthy,
        // keep the host's generous one (a loaded 2-core machine can take 100 ms for any hook).
        var probe = probeDescriptor("probe", ["faults": hang])
        probe.deadline = .milliseconds(100)
        try await withTestHost(
            [descriptor(settings), probe],
            configuration: .init(hookDeadline: .seconds(10), launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"),
            logs: capture
        ) { host in
            try await host.launched()
            try await host.enterBackground()
            try await host.enterForeground()
            try await host.receiveMemoryWarning(level: .critical)
            if let newSettings {
                try await host.reload([descriptor(newSettings), probeDescriptor("probe", ["faults": hang])])
                try await host.receiveMemoryWarning(level: .warning)
            }
        }
        return capture.all.filter { $0.metadata["from_state"] != nil && $0.metadata["service"] == "logger" }
    }

    @Test func writesOneRecordPerEventInOrderWithTerminateLast() async throws {
        let records = try await Self.audit()
        #expect(records.map { $0.metadata["event"] } == [
            "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
            "willEnterForeground", "didBecomeActive", "didReceiveMemoryWarning.critical", "willTerminate",
        ])
        let background = try #require(records.first { $0.metadata["event"] == "didEnterBackground" })
        #expect(background.metadata["from_state"] == "inactive")
        #expect(background.metadata["to_state"] == "background")
        #expect(background.metadata["service_count"] == "2")
        #expect(background.metadata["overran"] == "probe")
        #expect(background.level == .warning)
        #expect(background.message.hasPrefix("didEnterBackground: inactive → background in "))
        #expect(background.message.contains("(2 services); overran: probe (100ms)"))
        #expect(Int(background.metadata["duration_us"] ?? "") ?? 0 >= 100_000)
        let active = try #require(records.first { $0.metadata["event"] == "didBecomeActive" })
        #expect(active.level == .info)
        #expect(active.metadata["overran"] == nil)
        #expect(records.last?.message == "willTerminate: terminating → notRunning (2 services)")
    }

    @Test("a request the machine asked for (logind's sleep, its resume) is in the trail with its cause; a plain one without")
    func theTrailNamesTheCause() async throws {
        let capture = CapturedLogs()
        try await withTestHost([Self.descriptor()], logs: capture) { host in
            try await host.launched()
            try await host.enterBackground(cause: "sleep")
            try await host.enterForeground(cause: "resume")
            try await host.enterBackground()
        }
        let records = capture.all.filter { $0.metadata["from_state"] != nil && $0.metadata["service"] == "logger" }
        let causes = records.filter { ["didEnterBackground", "didBecomeActive"].contains($0.metadata["event"]) }.map { $0.metadata["cause"] }
        #expect(causes == [nil, "sleep", "resume", nil], "launch, sleep, resume, plain: \(records.map(\.message))")
        let sleep = try #require(records.first { $0.metadata["cause"] == "sleep" && $0.metadata["event"] == "didEnterBackground" })
        #expect(sleep.message.hasSuffix("(1 service); cause: sleep"), "\(sleep.message)")
    }

    @Test("each change of the network path and the power state is in the trail with its cause and the value told")
    func theTrailRecordsConditions() async throws {
        let capture = CapturedLogs()
        try await withTestHost([Self.descriptor()], logs: capture) { test in
            try await test.launched()
            await test.updateNetworkPath(NetworkPath(status: .unavailable))
            await test.updatePowerState(PowerState(isLowPowerModeEnabled: true))
        }
        let records = capture.all.filter { $0.metadata["from_state"] != nil && $0.metadata["service"] == "logger" }
        let network = try #require(records.first { $0.metadata["event"] == "networkDidChange" })
        #expect(network.metadata["cause"] == "network" && network.metadata["network"] == "unavailable")
        #expect(network.message.hasSuffix("cause: network; network: unavailable"), "\(network.message)")
        let power = try #require(records.first { $0.metadata["event"] == "powerStateDidChange" })
        #expect(power.metadata["cause"] == "power" && power.metadata["power"] == "low power")
    }

    @Test func recordsOnlyChosenEventsAtTheChosenLevel() async throws {
        let records = try await Self.audit(["level": .string("notice"), "events": .array([.string("didReceiveMemoryWarning"), .string("willTerminate")])])
        #expect(records.map { $0.metadata["event"] } == ["didReceiveMemoryWarning.critical", "willTerminate"])
        #expect(records.allSatisfy { $0.level == .notice })
    }

    @Test func reloadChangesLevelAndEventsLive() async throws {
        let records = try await Self.audit(["events": .array([.string("didBecomeActive")])], reloadTo: ["level": .string("error"), "events": .array([.string("didReceiveMemoryWarning.warning")])])
        #expect(records.map { $0.metadata["event"] } == ["didBecomeActive", "didBecomeActive", "didReceiveMemoryWarning.warning"])
        #expect(records.last?.level == .error)
    }

    @Test func aFailedLaunchIsInTheTrailAndTheRollbackDoesNotWaitForIt() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = CapturedLogs()
        let refuse: SettingValue = .array([.table(["hook": .string("willFinishLaunching"), "action": .string("refuse")])])
        let host = try PluggableApplicationHost(
            services: [Self.descriptor(), probeDescriptor("probe", ["faults": refuse], isRequired: true)],
            configuration: .init(terminateDeadline: .seconds(2), launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"),
            logger: capture.logger()
        )
        try await host.withRunning {
            await #expect(throws: LaunchFailure.self) { try await host.launched() }
            let trail = capture.all.filter { $0.metadata["from_state"] != nil && $0.metadata["service"] == "logger" }
            #expect(trail.map { $0.metadata["event"] } == ["didFinishLaunching", "willTerminate"])
            #expect(trail.first?.metadata["failed"] == "probe")
            #expect(!capture.all.contains { $0.metadata["overran"] != nil || $0.message.contains("overran") })
            #expect(!capture.all.contains { $0.message.contains("removed by a reload") })
        }
    }

    @Test func writesTheTrailWhenTheRunLoopNeverStarted() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let capture = CapturedLogs()
        let host = try PluggableApplicationHost(services: [Self.descriptor()], configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"), logger: capture.logger())
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
        }
        let events = capture.all.filter { $0.metadata["from_state"] != nil }.map { $0.metadata["event"] }
        #expect(events == ["didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground", "willTerminate"])
    }

    @Test(arguments: [
        (["level": SettingValue.string("loud")], "level"),
        (["events": .array([.string("didExplode")])], "events[0]"),
        (["events": .string("didEnterBackground")], "events"),
        (["colour": .bool(true)], "colour"),
    ])
    func rejectsBadSettings(settings: [String: SettingValue], key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try LoggerService(configuration: ServiceSection(settings, keyPath: "services[0].settings"))
        }
        #expect(error?.keyPath == "services[0].settings.\(key)")
    }
}

/// Asks to be restarted whenever its settings change (the default answer).
private struct RestartedOnReload: ApplicationService {}

@Suite("logger after a reload")
struct LoggerAfterReloadTests {
    @Test func theTerminateRecordCountsEveryServiceAfterAReloadRestartedOne() async throws {
        let logs = CapturedLogs()
        func plain(_ version: Int) -> ServiceDescriptor {
            ServiceDescriptor(name: "plain", configuration: ["version": .int(version)]) { RestartedOnReload() }
        }
        try await withTestHost([LoggerServiceTests.descriptor(), plain(1)], logs: logs) { host in
            try await host.launched()
            let reload = try await host.reload([LoggerServiceTests.descriptor(), plain(2)])
            #expect(reload.restarted == ["plain"])
            // The restarted service's catch-up reaches it alone.
            #expect(await logs.first { $0.message.hasPrefix("didBecomeActive: active → active") && $0.message.hasSuffix("(1 service)") } != nil)
        }
        let terminate = logs.all.last { $0.metadata["event"] == "willTerminate" }
        #expect(terminate?.message == "willTerminate: terminating → notRunning (2 services)")
        #expect(terminate?.metadata["service_count"] == "2")
    }
}

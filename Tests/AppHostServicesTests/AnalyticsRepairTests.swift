import AppHost
import AppHostServices
import AppHostSystemd
import AppHostTestKit
import AppHostTestSupport
import Foundation
import Testing

/// What analytics repairs it says, at error level, whichever flush found it.
@Suite struct AnalyticsRepairTests {
    @Test("a state directory deleted while the daemon runs: the background flush recreates it and logs so at error level")
    func recreatingADeletedStateDirectoryIsAnError() async throws {
        let directory = try makeTemporaryDirectory("apphost-analytics-repair")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = directory + "/state"
        let configuration = PluggableApplicationHost.Configuration(
            hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5),
            launchState: LaunchStateFiles(directory: state), stateDirectory: state
        )
        // A long interval: only the hooks flush during the test.
        let analytics = try AnalyticsService(configuration: ServiceSection(["flush-interval": .string("1h")]))
        try await withTestHost([ServiceDescriptor(name: "analytics", service: analytics)], configuration: configuration) { host in
            try await host.launched()
            // Nothing pending before the deletion, so no timer flush can find it first.
            try analytics.flush()
            try FileManager.default.removeItem(atPath: state + "/analytics")
            #expect(try await host.enterBackground())
            let repaired = await host.logs.first(timeout: .seconds(5)) { $0.message.contains("was deleted while the daemon ran") }
            #expect(repaired?.level == .error, "\(host.logs.messages)")
            #expect(FileManager.default.fileExists(atPath: state + "/analytics/summary.json"))
        }
    }
}

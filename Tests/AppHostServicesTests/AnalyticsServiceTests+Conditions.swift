import AppHost
import AppHostSupport
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

// The machine's conditions: time offline, in low power mode and on battery, and flushes less
// often in low power mode.
extension AnalyticsServiceTests {
    @Test("time offline, in low power mode and on battery: from the change that began it to the one that ended it, or to the end; in the table and the JSON")
    func timesTheConditions() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            await host.updateNetworkPath(NetworkPath(status: .unavailable))
            await host.updatePowerState(PowerState(isLowPowerModeEnabled: true, isOnBattery: true))
            // Time to pass, not a wait for anything: each condition holds at least this long.
            try await Task.sleep(for: .milliseconds(50))
            await host.updateNetworkPath(NetworkPath(status: .available))
            try await Task.sleep(for: .milliseconds(50))
            await host.updatePowerState(PowerState(isOnBattery: true))
            await host.updateNetworkPath(NetworkPath(status: .unknown))
        }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        // Lower bounds only: each interval holds at least the time let pass inside it.
        #expect(report.offlineSeconds >= 0.05, "\(report.offlineSeconds) s offline")
        #expect(report.lowPowerSeconds >= 0.1, "\(report.lowPowerSeconds) s in low power")
        #expect(report.onBatterySeconds >= report.lowPowerSeconds, "still on battery at the end: timed to the terminate")
        let rows = report.renderTable().split(separator: "\n").map(String.init)
        #expect(rows.contains { $0.hasPrefix("time offline ") } && rows.contains { $0.hasPrefix("time in low power mode ") } && rows.contains { $0.hasPrefix("time on battery ") })
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(report.renderJSON().utf8))) == report)
    }

    @Test("a summary written before these figures reads them as zero")
    func olderSummaryReadsAsZero() throws {
        let report = try AnalyticsReport(json: JSONValue(parsing: Array(#"{"launches": 2, "foregroundSeconds": 1.5}"#.utf8)))
        #expect(report.launches == 2 && report.offlineSeconds == 0 && report.lowPowerSeconds == 0 && report.onBatterySeconds == 0)
    }

    @Test("low-power-flush-interval: four times flush-interval unless set; too short is refused")
    func lowPowerFlushIntervalSetting() throws {
        #expect(try Self.service(["flush-interval": .string("30s")]).currentSettings.lowPowerFlushInterval == .seconds(120))
        #expect(try Self.service(["low-power-flush-interval": .string("10m")]).currentSettings.lowPowerFlushInterval == .seconds(600))
        #expect(throws: ConfigurationError.self) { try Self.service(["low-power-flush-interval": .string("1ms")]) }
    }

    @Test("in low power mode pending events wait low-power-flush-interval, not flush-interval")
    func lowPowerModeUsesItsInterval() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Without low power mode the event below would wait an hour.
        let analytics = try Self.service(["flush-interval": .string("1h"), "low-power-flush-interval": .string("10ms")])
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            await host.updatePowerState(PowerState(isLowPowerModeEnabled: true))
            try await host.receiveSignificantTimeChange(.midnight)
            let flushed = try await eventually(timeout: .seconds(10)) {
                try AnalyticsReport.load(stateDirectory: directory + "/state").timeChangesByCause["midnight"] == 1
            }
            #expect(flushed, "the event reached the log within low-power-flush-interval")
        }
    }
}

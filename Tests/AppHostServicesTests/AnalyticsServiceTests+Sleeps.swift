import AppHost
import AppHostSupport
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

// Sleeps: counted from the bus (`MachineDidResume`, which logind's edge publishes), with the time
// asleep, kept in the log and the summary.
extension AnalyticsServiceTests {
    @Test("each sleep is counted with its time asleep, each screen lock once, and the counts outlive the run")
    func countsSleeps() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            host.bus.publish(MachineDidResume(asleep: .seconds(90)))
            host.bus.publish(MachineDidResume(asleep: .milliseconds(1500)))
            host.bus.publish(ScreenLockDidChange(isLocked: true, session: "3"))
            host.bus.publish(ScreenLockDidChange(isLocked: false, session: "3"))
            #expect(await eventually { analytics.report?.sleeps == 2 && analytics.report?.screenLocks == 1 })
        }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.sleeps == 2)
        #expect(report.sleepSeconds == 91.5)
        #expect(report.screenLocks == 1, "a lock counts, an unlock does not")
        let row = report.renderTable().split(separator: "\n").first { $0.hasPrefix("sleeps ") }
        #expect(row.map { String($0.dropFirst(6).drop { $0 == " " }) } == "2 (1m 32s asleep)")
        let object = try JSONSerialization.jsonObject(with: Data(report.renderJSON().utf8)) as? [String: Any]
        #expect(object?["sleeps"] as? Int == 2)
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(report.renderJSON().utf8))) == report)
    }

    @Test("a summary from before sleeps were counted reads as none")
    func aSummaryWithoutSleeps() throws {
        let old = #"{"launches": 3, "lastSequence": 7}"#
        let report = try AnalyticsReport(json: JSONValue(parsing: Array(old.utf8)))
        #expect(report.sleeps == 0 && report.sleepSeconds == 0 && report.screenLocks == 0)
        #expect(report.renderTable().contains("\nsleeps "))
    }
}

import AppHost
import AppHostSupport
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

// Significant time changes, counted by cause: a change with two causes counts once for each.
extension AnalyticsServiceTests {
    @Test("time changes are counted by cause, kept in the log and the summary, and shown in the table and the JSON")
    func countsTimeChanges() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            try await host.receiveSignificantTimeChange(.timezone)
            try await host.receiveSignificantTimeChange([.clock, .midnight])
            try await host.receiveSignificantTimeChange(.midnight)
        }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.timeChangesByCause == ["timezone": 1, "clock": 1, "midnight": 2])
        let row = report.renderTable().split(separator: "\n").first { $0.hasPrefix("time changes by cause ") }
        #expect(row.map { String($0.dropFirst(22).drop { $0 == " " }) } == "midnight 2, clock 1, timezone 1")
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(report.renderJSON().utf8))) == report)
    }
}

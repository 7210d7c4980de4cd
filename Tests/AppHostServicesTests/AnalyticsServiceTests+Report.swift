import AppHost
import AppHostSupport
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

// The report and the files' formats: the table and JSON, summary.json and the log records as
// Foundation wrote and read them, and a missing directory.
extension AnalyticsServiceTests {
    @Test func reportRendersTableAndJSON() throws {
        var report = AnalyticsReport()
        report.apply(AnalyticsEvent(seq: 1, kind: .launch, first: true, previousExit: "none"))
        report.apply(AnalyticsEvent(seq: 2, kind: .background))
        report.apply(AnalyticsEvent(seq: 3, kind: .foregroundTime, seconds: 3725))
        report.apply(AnalyticsEvent(seq: 4, kind: .launch, previousExit: "unclean", exitCause: "signal KILL"))
        report.apply(AnalyticsEvent(seq: 5, kind: .launch, previousExit: "unclean", exitCause: "watchdog"))
        report.apply(AnalyticsEvent(seq: 6, kind: .launch, previousExit: "unclean", exitCause: "signal KILL"))
        let table = report.renderTable()
        #expect(table.contains("signal KILL 2, watchdog 1"), "\(table)")
        #expect(table.contains("launches"))
        #expect(table.contains("1h 2m 5s"))
        #expect(table.contains("1 (1 to background, 0 to foreground)"))
        let json = report.renderJSON()
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["launches"] as? Int == 4)
        #expect(object?["exitsByCause"] as? [String: Int] == ["signal KILL": 2, "watchdog": 1])
        #expect(object?["transitions"] as? Int == 1)
        #expect(object?["foregroundSeconds"] as? Double == 3725)
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(json.utf8))) == report)
    }

    @Test("summary.json reads and writes byte for byte as Foundation's JSONEncoder wrote it")
    func summaryMatchesWhatJSONEncoderWrote() throws {
        var report = AnalyticsReport()
        report.apply(AnalyticsEvent(seq: 1, kind: .launch, at: UnixTime(secondsSince1970: 1_795_435_498.7), first: true, previousExit: "none"))
        report.apply(AnalyticsEvent(seq: 2, kind: .foregroundTime, at: UnixTime(secondsSince1970: 1_795_435_600), seconds: 12.345))
        report.apply(AnalyticsEvent(seq: 3, kind: .memoryWarning, at: UnixTime(secondsSince1970: 1_795_435_700), level: "critical"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let earlier = String(decoding: try encoder.encode(report), as: UTF8.self)
        #expect(report.json.rendered(pretty: true) == earlier)
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(earlier.utf8))) == report)
    }

    @Test("an event log record reads as Foundation's JSONDecoder would have read it")
    func eventRecordsMatchJSONEncoder() throws {
        let event = AnalyticsEvent(seq: 7, kind: .backgroundTime, at: UnixTime(secondsSince1970: 1_795_435_498.123456), seconds: 0.1)
        let text = event.json.rendered()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["seq"] as? Int == 7)
        #expect(object["kind"] as? String == "backgroundTime")
        #expect(object["at"] as? Double == 1_795_435_498.123456)
        #expect(object["seconds"] as? Double == 0.1)
        #expect(object["first"] == nil)
        let earlier = #"{"at":1795435498.123456,"kind":"backgroundTime","seconds":0.1,"seq":7}"#
        #expect(AnalyticsEvent(json: try JSONValue(parsing: Array(earlier.utf8))) == event)
    }

    @Test func aMissingDirectoryIsAnEmptyReport() throws {
        #expect(try AnalyticsReport.load(stateDirectory: "/nonexistent/apphost-\(UUID())") == AnalyticsReport())
    }
}

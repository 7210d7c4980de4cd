import AppHost
import AppHostSupport
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

// Restarts by service: counted from the bus, kept in the log and the summary; and a record of a
// kind this version does not know, as a newer daemon writes them.
extension AnalyticsServiceTests {
    @Test("each restart of a service is counted for it, and the count outlives the run")
    func countsRestartsByService() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service()
        var probe = probeDescriptor("p", [
            "faults": .array([.table(["hook": .string("run"), "action": .string("throw"), "after": .string("10ms")])]),
        ], isRequired: false)
        // Two restarts, then the third end stops it.
        probe.restart = RestartPolicy(mode: .transient, delay: .milliseconds(1), intensity: 2, period: .seconds(60))
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics), probe], directory: directory) { host in
            #expect(await eventually { host.status.services.last?.failure != nil })
            #expect(await eventually { analytics.report?.restartsByService == ["p": 2] })
        }
        #expect(try AnalyticsReport.load(stateDirectory: directory + "/state").restartsByService == ["p": 2])
        // The next run reads them back from the summary the clean terminate wrote.
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { _ in }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.restartsByService == ["p": 2])
        #expect(report.launches == 2)
    }

    @Test("a restart record names its service and reads back the same, framed or not")
    func restartEventRoundTrip() throws {
        let event = AnalyticsEvent(seq: 9, kind: .restart, at: UnixTime(secondsSince1970: 1_795_435_498.5), service: "notify/desktop")
        let text = event.json.rendered()
        #expect(text == #"{"at":1795435498.5,"kind":"restart","seq":9,"service":"notify/desktop"}"#)
        #expect(AnalyticsEvent(json: try JSONValue(parsing: Array(text.utf8))) == event)
        let scan = AnalyticsLog.scan(AnalyticsLog.frame(event))
        #expect(scan.events == [event] && !scan.hasDamagedTail)
    }

    @Test("restarts by service in the table, the JSON and summary.json; a summary from before them reads as none")
    func reportRoundTripWithRestarts() throws {
        var report = AnalyticsReport()
        report.apply(AnalyticsEvent(seq: 1, kind: .launch, first: true, previousExit: "none"))
        report.apply(AnalyticsEvent(seq: 2, kind: .restart, service: "outbox"))
        report.apply(AnalyticsEvent(seq: 3, kind: .restart, service: "probe"))
        report.apply(AnalyticsEvent(seq: 4, kind: .restart, service: "outbox"))
        #expect(report.restartsByService == ["outbox": 2, "probe": 1])
        let row = { (report: AnalyticsReport) in
            report.renderTable().split(separator: "\n").first { $0.hasPrefix("restarts by service ") }.map { String($0.dropFirst(19).drop { $0 == " " }) }
        }
        #expect(row(report) == "outbox 2, probe 1")
        #expect(row(AnalyticsReport()) == "-")

        let json = report.renderJSON()
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["restartsByService"] as? [String: Int] == ["outbox": 2, "probe": 1])
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(json.utf8))) == report)
        #expect(try AnalyticsReport(json: JSONValue(parsing: Array(report.json.rendered(pretty: true).utf8))) == report)

        let before = #"{"launches":3,"lastSequence":7}"#
        let old = try AnalyticsReport(json: JSONValue(parsing: Array(before.utf8)))
        #expect(old.restartsByService == [:] && old.launches == 3)
        let wrong = #"{"restartsByService":{"outbox":"two"}}"#
        #expect(throws: JSONValue.FormatError.self) { try AnalyticsReport(json: JSONValue(parsing: Array(wrong.utf8))) }
    }

    @Test("a whole record of a kind this version does not know is skipped: the records after it count, and the log is not cut")
    func anUnknownKindIsSkippedNotCut() throws {
        /// A frame around `text`, as `AnalyticsLog.frame` makes one.
        func frame(_ text: String) -> [UInt8] {
            let payload = Array(text.utf8)
            let little = { (value: UInt32) in (0..<4).map { UInt8(truncatingIfNeeded: value >> UInt32($0 * 8)) } }
            return little(UInt32(payload.count)) + little(CRC32.checksum(payload)) + payload
        }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try AnalyticsStore(directory: directory)
        _ = store.record(.reload)
        try store.flush(compactAfter: .max)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: store.logPath)))
        bytes += frame(#"{"at":1795435498,"kind":"upgrade","seq":5,"version":"9.0"}"#)
        bytes += AnalyticsLog.frame(AnalyticsEvent(seq: 6, kind: .background))
        try Data(bytes).write(to: URL(fileURLWithPath: store.logPath))

        let scan = AnalyticsLog.scan(bytes)
        #expect(scan.events.map(\.kind) == [.reload, .background])
        #expect(scan.skipped == 1 && scan.lastSequence == 6 && !scan.hasDamagedTail)
        let reopened = try AnalyticsStore(directory: directory)
        #expect(reopened.recoveredBytes == 0 && reopened.skippedRecords == 1)
        #expect(reopened.report.reloads == 1 && reopened.report.backgroundEntries == 1)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: store.logPath))) == bytes)
        // Numbered after every record, the skipped one included.
        _ = reopened.record(.foreground)
        try reopened.flush(compactAfter: .max)
        let after = AnalyticsLog.scan(Array(try Data(contentsOf: URL(fileURLWithPath: store.logPath))))
        #expect(after.events.last?.seq == 7)

        // Without a sequence number it is no record: the tail from there is corrupt, as before.
        #expect(AnalyticsLog.scan(frame(#"{"at":1795435498,"kind":"upgrade"}"#)).hasDamagedTail)
    }
}

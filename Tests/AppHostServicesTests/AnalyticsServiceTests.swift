import AppHost
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

@Suite("analytics")
struct AnalyticsServiceTests {
    static func service(_ settings: [String: SettingValue] = [:]) throws -> AnalyticsService {
        try AnalyticsService(configuration: ServiceSection(settings))
    }

    @Test func countsACycleAndTheNextLaunches() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            try await host.reload([ServiceDescriptor(name: "analytics", service: analytics)])
            try await host.enterBackground()
            try await host.setSessionLocked(true)
            try await host.setSessionLocked(false)
            try await host.enterForeground()
            try await host.receiveMemoryWarning(level: .critical)
            try await host.receiveMemoryWarning(level: .warning)
            #expect(await eventually { analytics.report?.reloads == 1 })
        }

        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.launches == 1)
        #expect(report.firstLaunches == 1)
        #expect(report.cleanPreviousExits == 0 && report.uncleanPreviousExits == 0)
        #expect(report.backgroundEntries == 1 && report.foregroundEntries == 1 && report.transitions == 2)
        #expect(report.memoryWarnings == .init(warning: 1, critical: 1))
        #expect(report.sessionLocks == 1)
        #expect(report.reloads == 1)
        #expect(report.terminations == 1)
        #expect(report.foregroundSeconds > 0 && report.backgroundSeconds > 0)
        #expect(report == analytics.report)

        // A clean second run, then one that ends without terminate (the running marker stays).
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { _ in }
        let crashed = try PluggableApplicationHost(services: [ServiceDescriptor(name: "analytics", service: try Self.service())], configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try? await crashed.run() }
            try await crashed.launched()
            try await crashed.enterBackground()  // flushes the launch record
            // No terminate: cancelling run() stops the host at once, with no last calls and no
            // clean exit recorded, as if the process died.
            group.cancelAll()
        }
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { _ in }
        let after = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(after.launches == 4)
        #expect(after.firstLaunches == 1)
        #expect(after.cleanPreviousExits == 2)
        #expect(after.uncleanPreviousExits == 1)
        #expect(after.exitsByCause == ["clean": 2, "unknown": 1], "outside systemd only clean and unknown exist")
        #expect(after.terminations == 3)
    }

    @Test func flushesPendingEventsOnTheInterval() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analytics = try Self.service(["flush-interval": .string("50ms")])
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            let log = directory + "/state/analytics/events.log"
            let size = { (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0 }
            // The launch record is flushed by the run loop right after launch.
            #expect(await eventually { AnalyticsReport.load(at: directory)?.launches == 1 })
            let afterLaunch = size()
            try await host.setSessionLocked(true)  // recorded, not flushed by the hook
            #expect(await eventually { size() > afterLaunch })
            #expect(AnalyticsReport.load(at: directory)?.sessionLocks == 1)
        }
    }

    @Test("a clean terminate folds the log into summary.json: the next launch reads no records, and counts on")
    func cleanTerminateCompactsTheLog() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analyticsDirectory = directory + "/state/analytics"
        let logSize = { (try? FileManager.default.attributesOfItem(atPath: analyticsDirectory + "/events.log")[.size] as? Int) ?? -1 }
        // Far below the default compact-after (64 KiB): only the terminate compacts.
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { host in
            try await host.enterBackground()
            #expect(await eventually { logSize() > 0 }, "the background entry is flushed to the log")
        }
        #expect(logSize() == 0)
        let summary = try AnalyticsReport.loadSummary(directory: analyticsDirectory)
        #expect(summary.launches == 1 && summary.backgroundEntries == 1 && summary.terminations == 1)

        // A reload that removes analytics is no terminate: its log is left as it is.
        let analytics = try Self.service()
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: analytics)], directory: directory) { host in
            #expect(await eventually { logSize() > 0 }, "the launch record is flushed after launch")
            try await host.reload([])
            #expect(logSize() > 0)
        }
        let reopened = try AnalyticsStore(directory: analyticsDirectory)
        #expect(reopened.report.launches == 2 && reopened.report.terminations == 1 && reopened.report.backgroundEntries == 1)
    }

    @Test("a terminate that cannot write summary.json appends its events to the log instead: nothing is lost")
    func terminateFallsBackToTheLogWhenTheSummaryCannotBeWritten() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let analyticsDirectory = directory + "/state/analytics"
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try Self.service())], directory: directory) { host in
            try await host.enterBackground()
            // A directory where the summary's temporary file goes: its write fails.
            try FileManager.default.createDirectory(atPath: analyticsDirectory + "/summary.json.tmp-\(getpid())", withIntermediateDirectories: true)
        }
        #expect(!FileManager.default.fileExists(atPath: analyticsDirectory + "/summary.json"))
        let reopened = try AnalyticsStore(directory: analyticsDirectory)
        #expect(reopened.report.launches == 1 && reopened.report.backgroundEntries == 1 && reopened.report.terminations == 1,
                "the terminate's own record reached the log")
    }

    @Test("a state directory deleted under a running store: the next flush recreates it with every count held in memory")
    func deletedDirectoryIsRecreatedFromMemory() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/state/analytics"
        let store = try AnalyticsStore(directory: directory)
        for _ in 0..<3 { _ = store.record(.background) }
        try store.flush(compactAfter: .max)
        try FileManager.default.removeItem(atPath: root + "/state")

        for _ in 0..<2 { _ = store.record(.background) }
        #expect(try store.flush(compactAfter: .max) == 2)
        #expect(store.takeRepairNotice()?.contains("was deleted while the daemon ran") == true)
        #expect(store.takeRepairNotice() == nil, "the notice is given once")
        #expect(try AnalyticsReport.load(stateDirectory: "", directory: directory).backgroundEntries == 5)

        // The recreated log takes later records as before.
        _ = store.record(.foreground)
        try store.flush(compactAfter: .max)
        let reopened = try AnalyticsStore(directory: directory)
        #expect(reopened.report.backgroundEntries == 5 && reopened.report.foregroundEntries == 1)
    }

    @Test func recoveryDropsATornTailAndKeepsEverythingBefore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try AnalyticsStore(directory: directory)
        for _ in 0..<5 { _ = store.record(.background) }
        try store.flush(compactAfter: .max)
        let good = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store.logPath))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x20, 0, 0, 0, 1, 2, 3, 4, 0x7B, 0x22]))  // a frame cut short
        try handle.close()

        #expect(try AnalyticsReport.load(stateDirectory: "", directory: directory).backgroundEntries == 5)
        let reopened = try AnalyticsStore(directory: directory)
        #expect(reopened.recoveredBytes == 10)
        #expect(reopened.report.backgroundEntries == 5)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.logPath)) == good)
        // New records continue after the recovered prefix.
        _ = reopened.record(.foreground)
        try reopened.flush(compactAfter: .max)
        let again = try AnalyticsStore(directory: directory)
        #expect(again.report.backgroundEntries == 5 && again.report.foregroundEntries == 1)
        #expect(again.recoveredBytes == 0)
    }

    @Test func aCorruptRecordEndsTheGoodPrefix() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try AnalyticsStore(directory: directory)
        _ = store.record(.reload)
        try store.flush(compactAfter: .max)
        let firstLength = try Data(contentsOf: URL(fileURLWithPath: store.logPath)).count
        _ = store.record(.reload)
        _ = store.record(.reload)
        try store.flush(compactAfter: .max)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
        bytes[firstLength + 12] ^= 0x01  // one flipped bit inside the second record's payload
        try bytes.write(to: URL(fileURLWithPath: store.logPath))
        let reopened = try AnalyticsStore(directory: directory)
        #expect(reopened.report.reloads == 1)
        #expect(reopened.recoveredBytes == bytes.count - firstLength)
    }

    /// Stands in for SIGKILL mid-write: the log cut at every byte offset of its last record
    /// still reads, with every earlier record.
    @Test func aKillAtAnyByteOfTheLastRecordKeepsTheEarlierOnes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try AnalyticsStore(directory: directory)
        _ = store.record(.launch, first: true, previousExit: "none")
        _ = store.record(.memoryWarning, level: "critical")
        try store.flush(compactAfter: .max)
        let before = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
        let expected = store.report
        _ = store.record(.foregroundTime, seconds: 12.5)
        try store.flush(compactAfter: .max)
        let full = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
        #expect(full.count > before.count + 8)
        for cut in before.count..<full.count {
            try full.prefix(cut).write(to: URL(fileURLWithPath: store.logPath))
            let loaded = try AnalyticsReport.load(stateDirectory: "", directory: directory)
            #expect(loaded == expected, "cut at \(cut)")
            let recovered = try AnalyticsStore(directory: directory)
            #expect(recovered.report == expected, "cut at \(cut)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: store.logPath)) == before, "cut at \(cut)")
        }
        try full.write(to: URL(fileURLWithPath: store.logPath))
        #expect(try AnalyticsReport.load(stateDirectory: "", directory: directory).foregroundSeconds == 12.5)
    }

    @Test func compactionKeepsTotalsAndNeverCountsTwice() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try AnalyticsStore(directory: directory)
        var compacted = false
        for round in 0..<40 {
            _ = store.record(round.isMultiple(of: 2) ? .background : .foreground)
            _ = store.record(.backgroundTime, seconds: 1.5)
            let logBefore = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
            try store.flush(compactAfter: 1024)
            let logAfter = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
            if logAfter.count < logBefore.count + 50 { compacted = true }
        }
        #expect(compacted)
        #expect(FileManager.default.fileExists(atPath: store.summaryPath))
        let loaded = try AnalyticsReport.load(stateDirectory: "", directory: directory)
        #expect(loaded.transitions == 40)
        #expect(loaded.backgroundSeconds == 60)
        #expect(loaded == store.report)

        // Simulate a crash between writing the summary and truncating the log: compact, then put
        // the pre-compaction log back. Nothing may be counted twice.
        _ = store.record(.reload)
        try store.flush(compactAfter: .max)
        let uncompacted = try Data(contentsOf: URL(fileURLWithPath: store.logPath))
        try store.compact()
        try uncompacted.write(to: URL(fileURLWithPath: store.logPath))
        let replayed = try AnalyticsReport.load(stateDirectory: "", directory: directory)
        #expect(replayed.reloads == 1)
        #expect(replayed == store.report)
        #expect(try AnalyticsStore(directory: directory).report == store.report)
    }

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

    @Test(arguments: [
        (["flush-interval": SettingValue.string("often")], "flush-interval"),
        (["flush-interval": .string("1ms")], "flush-interval"),
        (["compact-after": .string("lots")], "compact-after"),
        (["compact-after": .int(0)], "compact-after"),
        (["compactAfter": .int(10)], "compactAfter"),
    ])
    func rejectsBadSettings(settings: [String: SettingValue], key: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try AnalyticsService(configuration: ServiceSection(settings, keyPath: "services[0].settings"))
        }
        #expect(error?.keyPath == "services[0].settings.\(key)")
    }

    @Test func parsesSizes() {
        #expect(AnalyticsService.parseSize("64KiB") == 65536)
        #expect(AnalyticsService.parseSize("1M") == 1 << 20)
        #expect(AnalyticsService.parseSize("512B") == 512)
        #expect(AnalyticsService.parseSize("4096") == 4096)
        #expect(AnalyticsService.parseSize("-1") == nil)
    }
}

extension AnalyticsReport {
    /// Loads from an analytics directory itself (tests keep the store's files in a bare temp dir).
    static func load(stateDirectory _: String, directory: String) throws -> AnalyticsReport {
        var report = try loadSummary(directory: directory)
        report.fold(AnalyticsLog.scan(try AtomicFile.read(directory + "/" + AnalyticsStore.logName) ?? []).events)
        return report
    }

    /// The report of a test host's state directory, nil while unreadable.
    static func load(at testDirectory: String) -> AnalyticsReport? {
        try? load(stateDirectory: testDirectory + "/state")
    }
}

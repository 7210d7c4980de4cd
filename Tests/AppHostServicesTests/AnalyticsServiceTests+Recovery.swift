import AppHost
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

// The event log after a crash: a torn tail, a corrupt record, a kill at any byte, and compaction.
extension AnalyticsServiceTests {
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
}

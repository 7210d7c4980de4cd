import AppHost
import AppHostDaemon
import AppHostServices
import AppHostSupport
import AppHostSystemd

#if canImport(Glibc)
import Glibc
#endif

/// The readers of the state directory's files that have a writer: each accepted input must
/// come back the same through the writer.
extension FuzzTarget {
    static func launchRecord(_ bytes: [UInt8]) {
        let record: LaunchStateFiles.Record
        do {
            record = try LaunchStateFiles.Record(json: bytes)
        } catch {
            precondition(!error.description.isEmpty, "launch record: a refusal without a message")
            return
        }
        let again = try? LaunchStateFiles.Record(json: record.json)
        precondition(again == record, "launch record: an accepted record does not come back the same")
    }

    static func reloadRecord(_ bytes: [UInt8]) {
        guard let record = ReloadRecord(json: bytes) else { return }
        let again = ReloadRecord(json: Array(record.json.rendered().utf8))
        precondition(again == record, "reload record: an accepted record does not come back the same")
    }

    /// `summary.json` through the store's own reader (`loadSummary`, the file of a directory of
    /// the target's): an accepted summary writes and reads back the same.
    static func summary(_ bytes: [UInt8]) {
        let directory = FuzzScratch.directory("summary")
        FuzzScratch.write(bytes, to: directory + "/summary.json")
        let report: AnalyticsReport
        do {
            report = try AnalyticsReport.loadSummary(directory: directory)
        } catch {
            precondition("\(error)".contains("summary.json"), "summary: a refusal that does not name the file: \(error)")
            return
        }
        let again = try? AnalyticsReport(json: JSONValue(parsing: Array(report.json.rendered().utf8)))
        precondition(again == report, "summary: an accepted summary does not come back the same")
    }

    /// The event log as the store opens it: the framing's scan, then the torn-tail recovery,
    /// which must cut the file to exactly the whole records and count each of them once.
    static func analyticsLog(_ bytes: [UInt8]) {
        let scan = AnalyticsLog.scan(bytes)
        precondition(scan.validLength <= bytes.count && scan.totalLength == bytes.count, "analytics log: a scan past the input")
        let whole = AnalyticsLog.scan(Array(bytes[..<scan.validLength]))
        precondition(whole.events == scan.events && !whole.hasDamagedTail, "analytics log: the whole records do not read alone")
        let framed = scan.events.flatMap(AnalyticsLog.frame)
        let reread = AnalyticsLog.scan(framed)
        precondition(reread.events == scan.events && !reread.hasDamagedTail, "analytics log: re-framed records do not read back")

        let directory = FuzzScratch.directory("analytics")
        unlink(directory + "/summary.json")
        FuzzScratch.write(bytes, to: directory + "/events.log")
        let store: AnalyticsStore
        do {
            store = try AnalyticsStore(directory: directory)
        } catch {
            fatalError("analytics log: the store refused to open over a damaged log: \(error)")
        }
        precondition(store.recoveredBytes == bytes.count - scan.validLength, "analytics log: recovered \(store.recoveredBytes) bytes, the scan says \(bytes.count - scan.validLength)")
        precondition(FuzzScratch.size(of: store.logPath) == scan.validLength, "analytics log: the recovery did not cut the log to its whole records")
        var expected = AnalyticsReport()
        expected.fold(scan.events)
        precondition(store.report == expected, "analytics log: the store's totals are not the records'")
        _ = store.adoptUnflushed(bytes)
    }
}

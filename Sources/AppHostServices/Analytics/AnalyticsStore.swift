import AppHost
import AppHostSupport
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Analytics' files in `<stateDirectory>/analytics`: `events.log`, framed and append-only, and
/// `summary.json`, written atomically when the log is compacted.
///
/// Events wait in memory until `flush()`, which appends them with one write and fsyncs; after a
/// SIGKILL at most the events since the last flush are lost and the file still reads.
package final class AnalyticsStore {
    static let logName = "events.log"
    static let summaryName = "summary.json"

    /// An I/O or format problem with analytics' files.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        let path: String
        let reason: String
        package var description: String { "analytics: \(path): \(reason)" }

        init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        init(_ operation: String, path: String, code: Int32 = errno) {
            self.init(path: path, reason: "\(operation): \(SystemErrorText.reason(code))")
        }
    }

    let directory: String
    /// Totals: the summary, every flushed record and every pending one.
    package private(set) var report: AnalyticsReport
    /// Bytes of framed records not yet written.
    private(set) var pending: [UInt8] = []
    /// Records not yet written.
    private(set) var pendingCount = 0
    /// Bytes dropped from a damaged tail when the store opened.
    package let recoveredBytes: Int
    /// Records of kinds this version does not count, found in the log when the store opened.
    package let skippedRecords: Int
    private var logSize: Int
    private var nextSequence: UInt64
    private var descriptor: Int32
    /// What a flush had to repair, for the service's log; taken by `takeRepairNotice()`.
    private var repairNotice: String?

    package var logPath: String { directory + "/" + Self.logName }
    var summaryPath: String { directory + "/" + Self.summaryName }

    /// Opens the store, creating it if needed, and truncates a torn or corrupt tail of the log
    /// to the last whole record.
    package init(directory: String) throws(Failure) {
        self.directory = directory
        do {
            try AtomicFile.makeDirectory(directory)
        } catch {
            throw Failure(path: directory, reason: "\(error)")
        }
        AtomicFile.removeLeftovers(of: directory + "/" + Self.summaryName)
        var report: AnalyticsReport
        do {
            report = try AnalyticsReport.loadSummary(directory: directory)
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(path: directory + "/" + Self.summaryName, reason: "\(error)")
        }
        let logPath = directory + "/" + Self.logName
        let fd = open(logPath, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure("open", path: logPath) }
        let bytes: [UInt8]
        do {
            bytes = try FileDescriptor(rawValue: fd).readAll()
        } catch {
            close(fd)
            throw Failure("read", path: logPath, code: error.rawValue)
        }
        let scan = AnalyticsLog.scan(bytes)
        if scan.hasDamagedTail {
            guard ftruncate(fd, off_t(scan.validLength)) == 0, fsync(fd) == 0 else {
                let code = errno
                close(fd)
                throw Failure("truncate", path: logPath, code: code)
            }
        }
        report.fold(scan.events)
        self.report = report
        self.descriptor = fd
        self.logSize = scan.validLength
        self.recoveredBytes = scan.totalLength - scan.validLength
        self.skippedRecords = scan.skipped
        self.nextSequence = max(report.lastSequence, scan.lastSequence) + 1
    }

    deinit {
        close(descriptor)
    }

    /// Counts an event now and queues it for the next flush. Returns true when the queue was
    /// empty before (a flush timer should start).
    func record(
        _ kind: AnalyticsEvent.Kind, at date: UnixTime = .now, first: Bool? = nil, previousExit: String? = nil, exitCause: String? = nil,
        seconds: Double? = nil, level: String? = nil, service: String? = nil, cause: String? = nil
    ) -> Bool {
        let event = AnalyticsEvent(
            seq: nextSequence, kind: kind, at: date, first: first, previousExit: previousExit, exitCause: exitCause, seconds: seconds, level: level, service: service,
            cause: cause
        )
        nextSequence += 1
        report.apply(event)
        let wasEmpty = pending.isEmpty
        pending.append(contentsOf: AnalyticsLog.frame(event))
        pendingCount += 1
        return wasEmpty
    }

    /// Takes back the records a previous run had counted but not flushed (its restorable state:
    /// framed records, as `pending` holds them). Records already in the log or the summary (by
    /// sequence number) are skipped, so nothing is counted twice. Returns how many were taken.
    package func adoptUnflushed(_ bytes: [UInt8]) -> Int {
        var adopted = 0
        for event in AnalyticsLog.scan(bytes).events where event.seq >= nextSequence {
            report.apply(event)
            pending.append(contentsOf: AnalyticsLog.frame(event))
            pendingCount += 1
            nextSequence = event.seq + 1
            adopted += 1
        }
        return adopted
    }

    /// Appends pending records with one write and fsyncs; compacts when the log grew past
    /// `compactAfter` bytes. Returns how many records were written.
    @discardableResult
    func flush(compactAfter: Int) throws(Failure) -> Int {
        guard !pending.isEmpty else { return 0 }
        if try recreateIfDeleted() {
            let count = pendingCount
            pending = []
            pendingCount = 0
            return count
        }
        var offset = 0
        while offset < pending.count {
            let written = pending.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                // Drop a partial append so the next flush does not start inside a torn record.
                if offset > 0 { _ = ftruncate(descriptor, off_t(logSize)) }
                throw Failure("write", path: logPath, code: code)
            }
            offset += written
        }
        guard fsync(descriptor) == 0 else { throw Failure("fsync", path: logPath) }
        let count = pendingCount
        logSize += pending.count
        pending = []
        pendingCount = 0
        if logSize > compactAfter { try compact() }
        return count
    }

    /// When the log was unlinked while open (the state directory deleted under the daemon), makes
    /// the directory and files again from memory: the summary gets every count, pending ones
    /// included, and the log starts empty. Returns whether it did.
    private func recreateIfDeleted() throws(Failure) -> Bool {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_nlink == 0 else { return false }
        do {
            try AtomicFile.makeDirectory(directory)
        } catch {
            throw Failure(path: directory, reason: "\(error)")
        }
        let fd = open(logPath, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure("open", path: logPath) }
        close(descriptor)
        descriptor = fd
        logSize = 0
        try compact()
        repairNotice = "\(logPath) was deleted while the daemon ran (its state directory removed?); recreated it, with the totals held in memory in \(Self.summaryName)"
        return true
    }

    /// What the last flushes had to repair, once.
    func takeRepairNotice() -> String? {
        defer { repairNotice = nil }
        return repairNotice
    }

    /// What a clean stop does: folds the log and the pending records into `summary.json` and
    /// empties the log, so the next launch reads no records. On failure `pending` is kept, for
    /// a flush to append.
    func foldAll() throws(Failure) {
        guard logSize > 0 || !pending.isEmpty else { return }
        try compact()
        pending = []
        pendingCount = 0
    }

    /// Folds everything into `summary.json` (atomically) and empties the log. A crash between
    /// the two steps double-counts nothing: the summary's `lastSequence` skips the old records.
    func compact() throws(Failure) {
        do {
            try AtomicFile.write(Array(report.json.rendered(pretty: true).utf8), to: summaryPath)
        } catch {
            throw Failure(path: summaryPath, reason: "\(error)")
        }
        guard ftruncate(descriptor, 0) == 0, fsync(descriptor) == 0 else { throw Failure("truncate", path: logPath) }
        logSize = 0
    }
}

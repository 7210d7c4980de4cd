import AppHost
import AppHostSupport
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps what launch options are made of in a state directory: `launch-state.json` (written
/// atomically), a `running` marker that exists from launch until a clean exit, so a marker
/// found at launch means the previous run ended uncleanly, and `last-exit`, why the last process
/// ended as systemd saw it (`recordExit(_:)`, from `apphostd record-exit`), which the next launch
/// reads once.
///
/// A launch renames its record into place before the first hook but syncs it to disk only after
/// `READY=1` (`makeLaunchDurable()`), which then also names it `launch-state.json.previous`.
/// A crash of the machine in between can leave the new record empty on a filesystem that does
/// not order a rename after its data (ext4 does); the next launch then goes on from the
/// previous one, the last record known to be on disk, as after any unclean exit.
public struct LaunchStateFiles: LaunchStateStorage {
    /// What `launch-state.json` holds, read and written by `LaunchStateFiles+Record.swift`.
    package struct Record: Equatable {
        var installationID: InstallationID
        var launchCount: Int
        var lastLaunch: UnixTime
    }

    /// The state directory.
    public let directory: String

    /// A store in `directory`, created on first use.
    public init(directory: String) {
        self.directory = directory
    }

    var recordPath: String { directory + "/launch-state.json" }
    var previousRecordPath: String { directory + "/launch-state.json.previous" }
    var markerPath: String { directory + "/running" }
    var exitRecordPath: String { directory + "/last-exit" }

    /// Records why the last process ended, for the next launch's `previousExitCause`.
    /// - Throws: an error naming the path and the system's reason.
    public func recordExit(_ cause: ExitCause) throws {
        try AtomicFile.makeDirectory(directory)
        try AtomicFile.write(Array((cause.recordText + "\n").utf8), to: exitRecordPath)
    }

    /// The cause `recordExit(_:)` recorded, taken: the file is removed, so a later run that
    /// ends with no record (a power loss) is not blamed on an old one. Anything but a small
    /// regular file holding one cause (a FIFO, garbage) counts as no record; it never blocks.
    func takeExitRecord() -> ExitCause? {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(FilePath(exitRecordPath), .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
        } catch let error as Errno where error == .noSuchFileOrDirectory {
            return nil
        } catch {
            // A symbolic link in its place (ELOOP), or one that cannot be opened: no record.
            try? AtomicFile.remove(exitRecordPath)
            return nil
        }
        defer {
            try? fd.close()
            // Made durable with the launch state, by `makeLaunchDurable()`.
            try? AtomicFile.remove(exitRecordPath, syncing: false)
        }
        guard let status = try? fd.stat(), status.type == .regular, status.size <= 64,
              let bytes = try? fd.readAll(limit: 64, expected: Int(status.size)),
              let text = String(validating: bytes, as: UTF8.self)
        else { return nil }
        return ExitCause(recordText: text)
    }

    /// Counts this launch, sets the running marker and returns the options for it.
    public func beginLaunch() throws -> LaunchOptions {
        try beginLaunch(now: .now)
    }

    /// `beginLaunch()` as of `now`.
    func beginLaunch(now: UnixTime) throws -> LaunchOptions {
        try AtomicFile.makeDirectory(directory)
        AtomicFile.removeLeftovers(of: recordPath)
        AtomicFile.removeLeftovers(of: previousRecordPath)
        let (previous, cutShort) = try readRecord()
        if previous != nil, !cutShort, access(previousRecordPath, F_OK) != 0 {
            // Nothing synced to fall back to yet (the first launch of a version that keeps
            // one): the record found becomes it, synced first, before it is replaced.
            try keepRecordAsPrevious()
        }
        let markerFound = cutShort || access(markerPath, F_OK) == 0
        let recorded = takeExitRecord()
        let healthProblem = markerFound ? readMarkedHealthProblem() : nil
        let record = Record(
            installationID: previous?.installationID ?? InstallationID(),
            launchCount: (previous?.launchCount ?? 0) + 1,
            lastLaunch: now
        )
        // Synced by `makeLaunchDurable()` after READY=1, with the directory (the rename, the
        // marker, the taken exit record). A killed process loses nothing: the kernel has the
        // files; a crash of the machine goes back to the previous record.
        try AtomicFile.write(record.json, to: recordPath, syncingDirectory: false, durable: false)
        // Only the marker's existence counts, so it needs no sync of its own.
        try AtomicFile.writeMarker(Array("\(getpid())\n".utf8), to: markerPath)
        return LaunchOptions(
            kind: previous == nil ? .firstLaunch : .restore,
            launchCount: record.launchCount,
            installationID: record.installationID,
            previousExit: previous == nil ? (markerFound ? .unclean : .none) : (markerFound ? .unclean : .clean),
            previousExitCause: recorded ?? (markerFound ? .unknown : (previous == nil ? nil : .clean)),
            previousHealthProblem: healthProblem,
            launchDate: now
        )
    }

    /// Syncs the record `beginLaunch()` wrote, names it `launch-state.json.previous` (the one a
    /// crash of the machine falls back to until the next launch's is synced), then syncs the
    /// state directory, which makes the rest durable at once: the record's rename, the marker
    /// and the taken exit record's removal.
    public func makeLaunchDurable() throws {
        try keepRecordAsPrevious()
        try AtomicFile.syncDirectoryReportingFailure(of: recordPath)
    }

    /// Syncs the record and names it `launch-state.json.previous`: the one to fall back to.
    private func keepRecordAsPrevious() throws {
        try AtomicFile.sync(recordPath)
        try AtomicFile.link(recordPath, as: previousRecordPath)
    }

    /// The record to go on from, and whether the last one was cut short: `launch-state.json`,
    /// or the synced `launch-state.json.previous` when a crash of the machine left the first
    /// empty or zero-filled (its data never reached the disk). Nil for a first launch, also one
    /// whose only record a crash cut short.
    /// - Throws: `ConfigurationError` for a record that holds something else (an edit by hand,
    ///   a newer format), whatever `.previous` holds: a count that goes back is not a repair.
    func readRecord() throws -> (Record?, cutShort: Bool) {
        guard let bytes = try AtomicFile.read(recordPath) else { return (nil, false) }
        do {
            return (try Record(json: bytes), false)
        } catch {
            guard bytes.allSatisfy({ $0 == 0 }) else {
                throw ConfigurationError(file: recordPath, keyPath: "", message: "launch state is unreadable: \(error)", hint: "remove the file to start over as a first launch")
            }
        }
        guard let kept = try? AtomicFile.read(previousRecordPath), let record = try? Record(json: kept) else { return (nil, true) }
        return (record, true)
    }

    /// Records that the run ended cleanly by removing the running marker. When the state
    /// directory was deleted while the run went on, writes `launch-state.json` again from
    /// `options`, so the next launch still counts as a restore of this installation.
    public func markCleanExit(of options: LaunchOptions) throws -> String? {
        var remark: String?
        if access(recordPath, F_OK) != 0 {
            try AtomicFile.makeDirectory(directory)
            let record = Record(installationID: options.installationID, launchCount: options.launchCount, lastLaunch: options.launchDate ?? .now)
            try AtomicFile.write(record.json, to: recordPath)
            remark = "\(recordPath) was deleted while the daemon ran (its state directory removed?); wrote it again from memory (launch \(options.launchCount))"
        }
        try AtomicFile.remove(markerPath)
        return remark
    }
}

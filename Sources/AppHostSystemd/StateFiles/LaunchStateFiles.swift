import AppHost
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
public struct LaunchStateFiles: LaunchStateStorage {
    /// What `launch-state.json` holds, read and written by `LaunchStateFiles+Record.swift`.
    struct Record: Equatable {
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
        let previous: Record?
        if let bytes = try AtomicFile.read(recordPath) {
            do {
                previous = try Record(json: bytes)
            } catch {
                throw ConfigurationError(file: recordPath, keyPath: "", message: "launch state is unreadable: \(error)", hint: "remove the file to start over as a first launch")
            }
        } else {
            previous = nil
        }
        let markerFound = access(markerPath, F_OK) == 0
        let recorded = takeExitRecord()
        let record = Record(
            installationID: previous?.installationID ?? InstallationID(),
            launchCount: (previous?.launchCount ?? 0) + 1,
            lastLaunch: now
        )
        // The record's data is synced before its rename, so no crash of the machine can leave
        // an empty record; the directory (the rename, the marker, the taken exit record) is
        // synced by `makeLaunchDurable()` after READY=1. A killed process loses nothing either
        // way: the kernel has the files.
        try AtomicFile.write(record.json, to: recordPath, syncingDirectory: false)
        // Only the marker's existence counts, so it needs no sync of its own.
        try AtomicFile.writeMarker(Array("\(getpid())\n".utf8), to: markerPath)
        return LaunchOptions(
            kind: previous == nil ? .firstLaunch : .restore,
            launchCount: record.launchCount,
            installationID: record.installationID,
            previousExit: previous == nil ? (markerFound ? .unclean : .none) : (markerFound ? .unclean : .clean),
            previousExitCause: recorded ?? (markerFound ? .unknown : (previous == nil ? nil : .clean)),
            launchDate: now
        )
    }

    /// Syncs the state directory, which makes what `beginLaunch()` did there durable at once:
    /// the record's rename, the marker and the taken exit record's removal.
    public func makeLaunchDurable() throws {
        try AtomicFile.syncDirectoryReportingFailure(of: recordPath)
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

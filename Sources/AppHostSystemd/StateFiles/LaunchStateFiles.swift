import AppHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps what launch options are made of in a state directory: `launch-state.json` (written
/// atomically) and a `running` marker that exists from launch until a clean exit, so a marker
/// found at launch means the previous run ended uncleanly.
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
        let record = Record(
            installationID: previous?.installationID ?? InstallationID(),
            launchCount: (previous?.launchCount ?? 0) + 1,
            lastLaunch: now
        )
        try AtomicFile.write(record.json, to: recordPath, syncingDirectory: false)
        // Only the marker's existence counts, so it needs no sync of its own: one directory sync
        // makes both the record's rename and the marker durable.
        try AtomicFile.writeMarker(Array("\(getpid())\n".utf8), to: markerPath)
        AtomicFile.syncDirectory(of: markerPath)
        return LaunchOptions(
            kind: previous == nil ? .firstLaunch : .restore,
            launchCount: record.launchCount,
            installationID: record.installationID,
            previousExit: previous == nil ? (markerFound ? .unclean : .none) : (markerFound ? .unclean : .clean),
            launchDate: now
        )
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

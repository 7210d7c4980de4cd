import AppHost
import AppHostSupport
import Logging
import SystemPackage

/// Keeps the host's `RestorableState` in two tiers, as `LaunchStateFiles` keeps launch state:
/// systemd's fd store (`FileDescriptorStore`: no disk write, survives crashes and restarts) and
/// `restorable-state` in the state directory (mode 0600, written atomically with fsync; survives
/// a stop and a reboot). `restore` gives the newer of the two. Outside systemd the file is the
/// only tier.
///
/// The disk tier is written by `writer`, a `Service` the daemon runs in its `ServiceGroup` (see
/// `RestorableStateFileEdge` for where and why); without it running, `persist` holds the state and
/// `persistNow(_:)` writes it.
public struct RestorableStateFiles: RestorableStateStorage {
    /// The file's name in the state directory.
    public static let fileName = "restorable-state"

    /// The state directory.
    public let directory: String
    /// The fast tier.
    public let fileDescriptorStore: FileDescriptorStore
    /// Writes what `persist` hands over; run it beside the host.
    public let writer: RestorableStateFileEdge
    /// The fd-store copy, read when this value was made, and what was wrong with the others.
    private let received: (state: RestorableState?, warnings: [String])

    /// The tiers in `directory` and `fileDescriptorStore`. Reads the entry named after the store
    /// among `received` now and closes every received fd, so none stays open; `restore` reports
    /// what it found.
    /// `coalescing`: how long the writer lets states gather before it writes the newest (see
    /// `RestorableStateFileEdge`).
    public init(
        directory: String,
        received: consuming ReceivedFileDescriptors = ReceivedFileDescriptors(),
        fileDescriptorStore: FileDescriptorStore = FileDescriptorStore(),
        coalescing: Duration = .seconds(1),
        logger: Logger
    ) {
        self.directory = directory
        self.fileDescriptorStore = fileDescriptorStore
        let path = directory + "/" + Self.fileName
        self.writer = RestorableStateFileEdge(directory: directory, path: path, coalescing: coalescing, logger: logger)
        var warnings: [String] = []
        let state = received.restorableState(named: fileDescriptorStore.name) { warnings.append($0) }
        self.received = (state, warnings)
    }

    /// The disk tier's file.
    public var path: String { writer.path }

    /// The newer of the fd-store copy and the file (the fd store's on a tie); a copy that cannot
    /// be used is described through `warning` and skipped.
    public func restore(warning: (String) -> Void) -> RestorableState? {
        received.warnings.forEach(warning)
        AtomicFile.removeLeftovers(of: path)
        let fromFile = readFile(warning: warning)
        guard let fromStore = received.state else { return fromFile }
        guard let fromFile, fromFile.generation > fromStore.generation else { return fromStore }
        return fromFile
    }

    /// Keeps `state` in the fd store; does nothing outside systemd.
    /// - Throws: `FileDescriptorStore.Failure` naming the step that failed.
    public func keep(_ state: RestorableState) throws {
        try fileDescriptorStore.keep(state)
    }

    /// Hands `state` to `writer` and returns at once (see `RestorableStateFileEdge`).
    public func persist(_ state: RestorableState) {
        writer.submit(state)
    }

    /// Hands `state` to `writer`, which writes it without waiting out its coalescing window, and
    /// returns once it (or a newer state) is on disk: what the host awaits before it answers a
    /// request that lets the machine sleep or shut down. The writer's task does the write and
    /// its `fsync`; when the writer has ended, the caller does.
    public func persistDurably(_ state: RestorableState) async {
        await writer.submitDurably(state)
    }

    /// Writes the state handed to `persist` and not yet written, now, on the caller's path: for
    /// a program that does not run `writer`.
    public func writePending() {
        writer.writePending()
    }

    /// Writes `state` to the file now, on the caller's path, in order with the writer's writes
    /// (a state no newer than the last written is skipped): for tests, and for programs that do
    /// not run `writer`.
    /// - Throws: an error naming the path and the system's reason.
    public func persistNow(_ state: RestorableState) throws {
        try writer.write(state)
    }

    /// The file's copy; nil when there is none or it cannot be used (then with a warning).
    private func readFile(warning: (String) -> Void) -> RestorableState? {
        let fd: FileDescriptor
        do {
            // Non-blocking: a FIFO put in the file's place must not hold the launch.
            fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
        } catch let error as Errno where error == .noSuchFileOrDirectory {
            return nil
        } catch {
            warning("restorable state in \(path) ignored: open: \(SystemErrorText.describe((error as? Errno ?? .ioError).rawValue))")
            return nil
        }
        defer { try? fd.close() }
        do {
            return try RestorableState(reading: fd, requiringSeals: false)
        } catch {
            warning("restorable state in \(path) ignored: \(error)")
            return nil
        }
    }
}

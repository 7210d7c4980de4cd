import AppHost
import AppHostSupport
import AppHostTestKit
import AppHostTestSupport
import Glibc
import Testing

@testable import AppHostSystemd

@Suite struct RestorableStateFilesTests {
    /// Files in `directory` outside systemd, with `received` as the fds passed at start.
    private func files(in directory: TemporaryDirectory, received: consuming ReceivedFileDescriptors = ReceivedFileDescriptors(), environment: [String: String] = [:]) -> RestorableStateFiles {
        RestorableStateFiles(directory: directory.path, received: received, fileDescriptorStore: FileDescriptorStore(environment: environment), logger: CapturedLogs().logger())
    }

    /// What `restore` gives, and its warnings.
    private func restore(_ files: RestorableStateFiles) -> (state: RestorableState?, warnings: [String]) {
        var warnings: [String] = []
        let state = files.restore { warnings.append($0) }
        return (state, warnings)
    }

    @Test func withNothingKeptThereIsNothingToRestore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = restore(files(in: directory))
        #expect(result.state == nil)
        #expect(result.warnings.isEmpty)
    }

    @Test func aPersistedStateIsRestoredFromTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = RestorableState.sample(generation: 4)
        try files(in: directory).persistNow(state)

        let result = restore(files(in: directory))
        #expect(result.state == state)
        #expect(result.warnings.isEmpty)
        var status = stat()
        #expect(stat(directory.file("restorable-state"), &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    @Test func theStateDirectoryIsCreatedOnFirstWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let nested = RestorableStateFiles(directory: directory.file("state/apphostd"), fileDescriptorStore: FileDescriptorStore(environment: [:]), logger: CapturedLogs().logger())
        try nested.persistNow(.sample(generation: 1))
        #expect(nested.restore { _ in }?.generation == 1)
    }

    @Test func aDamagedFileGivesAWarningAndNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try files(in: directory).persistNow(.sample(generation: 4))
        let path = directory.file("restorable-state")
        var bytes = try #require(try AtomicFile.read(path))
        bytes[bytes.count - 6] ^= 0x01
        try AtomicFile.write(bytes, to: path)

        let result = restore(files(in: directory))
        #expect(result.state == nil)
        #expect(result.warnings == ["restorable state in \(path) ignored: damaged (checksum mismatch)"])
    }

    @Test func anOversizedFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("restorable-state")
        try AtomicFile.write([UInt8](repeating: 0, count: RestorableState.maximumEncodedSize + 10), to: path)
        let result = restore(files(in: directory))
        #expect(result.state == nil)
        #expect(result.warnings == ["restorable state in \(path) ignored: 1048586 bytes, more than the 1048576-byte limit"])
    }

    @Test func aFIFOInTheFilesPlaceIsRefusedWithoutWaiting() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("restorable-state")
        #expect(mkfifo(path, 0o600) == 0)
        let result = restore(files(in: directory))
        #expect(result.state == nil)
        #expect(result.warnings == ["restorable state in \(path) ignored: it is a FIFO, not a regular file (not read)"])
    }

    @Test func aSymbolicLinkInTheFilesPlaceIsNotFollowed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try AtomicFile.write(RestorableState.sample(generation: 1).encoded(), to: directory.file("elsewhere"))
        let path = directory.file("restorable-state")
        #expect(symlink(directory.file("elsewhere"), path) == 0)
        let result = restore(files(in: directory))
        #expect(result.state == nil)
        #expect(result.warnings == ["restorable state in \(path) ignored: open: Too many levels of symbolic links (errno 40)"])
    }

    @Test func theFdStoresCopyWinsWhenItIsNewer() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try files(in: directory).persistNow(.sample(generation: 3))
        var newer = RestorableState.sample(generation: 5)
        newer.isInBackground = false
        let memory = try makeMemoryFile(newer.encoded())

        let result = restore(files(in: directory, received: ReceivedFileDescriptors(descriptors: [memory], names: ["apphost-state"])))
        #expect(result.state == newer)
        #expect(result.warnings.isEmpty)
    }

    @Test func theFileWinsWhenItIsNewer() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var newer = RestorableState.sample(generation: 9)
        newer.services = ["only": [9]]
        try files(in: directory).persistNow(newer)
        let memory = try makeMemoryFile(RestorableState.sample(generation: 8).encoded())

        let result = restore(files(in: directory, received: ReceivedFileDescriptors(descriptors: [memory], names: ["apphost-state"])))
        #expect(result.state == newer)
        #expect(result.warnings.isEmpty)
    }

    @Test func aRefusedFdStoreCopyLeavesTheFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = RestorableState.sample(generation: 2)
        try files(in: directory).persistNow(state)
        let unsealed = try makeMemoryFile(RestorableState.sample(generation: 6).encoded(), sealed: false)

        let result = restore(files(in: directory, received: ReceivedFileDescriptors(descriptors: [unsealed], names: ["apphost-state"])))
        #expect(result.state == state)
        #expect(result.warnings.count == 1)
        #expect(result.warnings.first?.contains("not sealed against change") == true)
    }

    @Test func restoringTwiceGivesTheSameAndClosesTheReceivedFdsAtOnce() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = RestorableState.sample(generation: 5)
        let memory = try makeMemoryFile(state.encoded())
        let identity = fileIdentity(memory)
        let files = files(in: directory, received: ReceivedFileDescriptors(descriptors: [memory], names: ["apphost-state"]))
        #expect(isClosed(memory, identity: identity))
        #expect(restore(files).state == state)
        #expect(restore(files).state == state)
    }

    @Test func keptInOneRunRestoredInTheNext() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let state = RestorableState.sample(generation: 77)
        // RestorableStateFiles.keep is FileDescriptorStore.keep, which libsystemd sends from the
        // process's own $NOTIFY_SOCKET: through the probe.
        #expect(try FileDescriptorStoreTests.keep([state], environment: ["NOTIFY_SOCKET": receiver.notifySocket], in: directory).last == "kept")
        #expect(receiver.receiveWithDescriptors()?.text.hasPrefix("FDSTOREREMOVE=1") == true)
        let push = try #require(receiver.receiveWithDescriptors())

        // The next run: systemd hands the memfd back under its name.
        let next = files(in: directory, received: ReceivedFileDescriptors(descriptors: push.descriptors, names: ["apphost-state"]))
        let result = restore(next)
        #expect(result.state == state)
        #expect(result.warnings.isEmpty)
    }

    @Test func keepOutsideSystemdWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory)
        try files.keep(.sample(generation: 1))
        #expect(restore(files).state == nil)
    }
}

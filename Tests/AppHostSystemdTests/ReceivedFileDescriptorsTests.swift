import AppHost
import AppHostSupport
import AppHostTestSupport
import CAppHostShims
import Glibc
import Testing

@testable import AppHostSystemd

@Suite struct ReceivedFileDescriptorsTests {
    /// What reading `fds` named `names` for `apphost-state` gave, and the warnings, and whether
    /// every fd was closed after.
    private func readState(_ fds: [Int32], names: [String]) -> (state: RestorableState?, warnings: [String], allClosed: Bool) {
        let identities = fds.map(fileIdentity)
        var warnings: [String] = []
        let received = ReceivedFileDescriptors(descriptors: fds, names: names)
        let state = received.restorableState(named: "apphost-state") { warnings.append($0) }
        let allClosed = zip(fds, identities).allSatisfy { isClosed($0, identity: $1) }
        return (state, warnings, allClosed)
    }

    @Test func aSealedMemfdWithAGoodStateIsReadAndClosed() throws {
        let state = RestorableState.sample(generation: 42)
        let fd = try makeMemoryFile(state.encoded())
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == state)
        #expect(result.warnings.isEmpty)
        #expect(result.allClosed)
    }

    @Test func aPipeIsRefusedWithoutWaitingOnIt() async throws {
        let pipe = try makePipe()
        defer { close(pipe.write) }
        let reading = Task { readState([pipe.read], names: ["apphost-state"]) }
        let returned = await completes(within: .seconds(10)) { _ = await reading.value }
        try #require(returned, "reading an empty pipe blocked")
        let result = await reading.value
        #expect(result.state == nil)
        #expect(result.warnings == ["restorable state in fd \(pipe.read) (\"apphost-state\") from systemd's fd store ignored: it is a FIFO, not a regular file (not read)"])
        #expect(result.allClosed)
    }

    @Test func anUnsealedMemfdIsRefusedBecauseItCouldStillChange() throws {
        let fd = try makeMemoryFile(RestorableState.sample(generation: 1).encoded(), sealed: false)
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == nil)
        #expect(result.warnings.count == 1)
        #expect(result.warnings.first?.contains("it is not sealed against change (seals 0x0, needs 0xf)") == true, "\(result.warnings)")
        #expect(result.allClosed)
    }

    @Test func aPartlySealedMemfdIsRefused() throws {
        let fd = try makeMemoryFile(RestorableState.sample(generation: 1).encoded(), sealed: false)
        #expect(apphost_add_seals(fd, apphost_complete_seals() & ~Int32(0x8)) == 0)
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == nil)
        #expect(result.warnings.first?.contains("it is not sealed against change") == true, "\(result.warnings)")
    }

    @Test func aFileThatCannotBeSealedIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("plain")
        try AtomicFile.write(RestorableState.sample(generation: 1).encoded(), to: path)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        #expect(fd >= 0)
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == nil)
        #expect(result.warnings.first?.contains("it is not a sealed memory file (F_GET_SEALS: Invalid argument (errno 22))") == true, "\(result.warnings)")
        #expect(result.allClosed)
    }

    @Test func anOversizedSealedMemfdIsRefusedBeforeItIsRead() throws {
        let fd = try makeMemoryFile([UInt8](repeating: 0x41, count: RestorableState.maximumEncodedSize + 1))
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == nil)
        #expect(result.warnings.first?.hasSuffix("ignored: 1048577 bytes, more than the 1048576-byte limit") == true, "\(result.warnings)")
        #expect(result.allClosed)
    }

    @Test func aDamagedSealedMemfdIsRefused() throws {
        var bytes = RestorableState.sample(generation: 7).encoded()
        bytes[bytes.count / 2] ^= 0x10
        let fd = try makeMemoryFile(bytes)
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == nil)
        #expect(result.warnings.first?.hasSuffix("ignored: damaged (checksum mismatch)") == true, "\(result.warnings)")
        #expect(result.allClosed)
    }

    @Test func aNewerFormatIsRefused() throws {
        var bytes = RestorableState.sample(generation: 7).encoded()
        bytes[4] = RestorableState.formatVersion + 1
        let fd = try makeMemoryFile(bytes)
        let result = readState([fd], names: ["apphost-state"])
        #expect(result.state == nil)
        #expect(result.warnings.first?.hasSuffix("ignored: format version 2, newer than this binary reads (1)") == true, "\(result.warnings)")
        #expect(result.allClosed)
    }

    @Test func anFdOfAnotherNameIsClosedUnreadWithAWarning() throws {
        let state = RestorableState.sample(generation: 3)
        let ours = try makeMemoryFile(state.encoded())
        let theirs = try makeMemoryFile(RestorableState.sample(generation: 9).encoded())
        let result = readState([theirs, ours], names: ["socket-of-someone", "apphost-state"])
        #expect(result.state == state)
        #expect(result.warnings == ["fd \(theirs) (\"socket-of-someone\") from systemd's fd store is not apphost-state; closed it unread"])
        #expect(result.allClosed)
    }

    @Test func anFdWithoutANameIsUnknownAndClosed() throws {
        let fd = try makeMemoryFile(RestorableState.sample(generation: 3).encoded())
        let result = readState([fd], names: [])
        #expect(result.state == nil)
        #expect(result.warnings == ["fd \(fd) (\"unknown\") from systemd's fd store is not apphost-state; closed it unread"])
        #expect(result.allClosed)
    }

    @Test func ofSeveralEntriesTheNewestUsableWins() throws {
        let newest = RestorableState.sample(generation: 12)
        var damaged = RestorableState.sample(generation: 20).encoded()
        damaged[damaged.count - 1] ^= 1
        let fds = [
            try makeMemoryFile(RestorableState.sample(generation: 5).encoded()),
            try makeMemoryFile(newest.encoded()),
            try makeMemoryFile(damaged),
        ]
        let result = readState(fds, names: Array(repeating: "apphost-state", count: 3))
        #expect(result.state == newest)
        #expect(result.warnings.count == 1)
        #expect(result.allClosed)
    }

    @Test func droppedUnreadTheyAreClosedAllTheSame() throws {
        let fd = try makeMemoryFile(RestorableState.sample(generation: 1).encoded())
        let identity = fileIdentity(fd)
        do {
            let received = ReceivedFileDescriptors(descriptors: [fd], names: ["apphost-state"])
            #expect(received.count == 1)
        }
        #expect(isClosed(fd, identity: identity))
    }

    @Test func thePreludesCountAndNamesMapToFdsFromTheFirstOn() throws {
        // Free, consecutive numbers far above what the test process uses, standing in for 3, 4.
        let first: Int32 = 900
        #expect(fileIdentity(first) == nil && fileIdentity(first + 1) == nil)
        let state = RestorableState.sample(generation: 8)
        let memory = try makeMemoryFile(state.encoded())
        let other = try makeMemoryFile([])
        #expect(dup2(other, first) == first)
        #expect(dup2(memory, first + 1) == first + 1)
        close(memory)
        close(other)
        let identities = [fileIdentity(first), fileIdentity(first + 1)]
        var warnings: [String] = []
        let received = ReceivedFileDescriptors(listenFDCount: 2, names: "stray:apphost-state", startingAt: first)
        #expect(received.count == 2)
        #expect(received.restorableState(named: "apphost-state") { warnings.append($0) } == state)
        #expect(warnings == ["fd 900 (\"stray\") from systemd's fd store is not apphost-state; closed it unread"])
        #expect(isClosed(first, identity: identities[0]) && isClosed(first + 1, identity: identities[1]))
    }

    @Test func noneIsNothing() {
        var warnings: [String] = []
        #expect(ReceivedFileDescriptors().restorableState(named: "apphost-state") { warnings.append($0) } == nil)
        #expect(ReceivedFileDescriptors(listenFDCount: 0, names: nil).count == 0)
        #expect(warnings.isEmpty)
    }
}

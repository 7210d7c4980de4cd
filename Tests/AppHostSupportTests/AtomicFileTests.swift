@testable import AppHostSupport
import AppHostTestSupport
import Foundation
import Testing


@Suite struct AtomicFileTests {
    @Test func makeDirectoryCreatesParentsWithMode0700() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let nested = root + "/state/apphostd/"
        try AtomicFile.makeDirectory(nested)
        for path in [root + "/state", root + "/state/apphostd"] {
            var status = stat()
            #expect(stat(path, &status) == 0)
            #expect(status.st_mode & S_IFMT == S_IFDIR)
            #expect(status.st_mode & 0o777 == 0o700, "\(path) has mode \(String(status.st_mode & 0o777, radix: 8))")
        }
        try AtomicFile.makeDirectory(nested)  // exists: fine
    }

    @Test func makeDirectoryRefusesAFileInTheWay() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try AtomicFile.write(Array("x".utf8), to: root + "/file")
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.makeDirectory(root + "/file") }
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.makeDirectory(root + "/file/below") }
    }

    @Test func readGivesTheBytesOrNilForAMissingFile() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(try AtomicFile.read(root + "/missing") == nil)
        let large = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        try AtomicFile.write(large, to: root + "/large")
        #expect(try AtomicFile.read(root + "/large") == large)
        try AtomicFile.writeMarker(Array("42\n".utf8), to: root + "/marker")
        #expect(try AtomicFile.read(root + "/marker") == Array("42\n".utf8))
        #expect(throws: AtomicFile.Failure.self) { try AtomicFile.read(root) }
    }

    @Test("a FIFO where a file belongs is refused at once, unread, never waited on")
    func aFIFOIsRefusedWithoutBlocking() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkfifo(root + "/fifo", 0o644) == 0)
        let failure = #expect(throws: AtomicFile.Failure.self) { try AtomicFile.read(root + "/fifo") }
        #expect(failure?.description == "read \(root)/fifo: a FIFO, not a regular file")
    }

    @Test func parentDirectoryIsThePathsDirectoryPart() {
        #expect(AtomicFile.parentDirectory(of: "/var/lib/apphostd/running") == "/var/lib/apphostd")
        #expect(AtomicFile.parentDirectory(of: "/var/lib/apphostd/") == "/var/lib")
        #expect(AtomicFile.parentDirectory(of: "/running") == "/")
        #expect(AtomicFile.parentDirectory(of: "running") == ".")
        #expect(AtomicFile.parentDirectory(of: "state//running") == "state")
        #expect(AtomicFile.parentDirectory(of: "/") == "/")
    }
}

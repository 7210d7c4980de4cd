@testable import AppHostSupport
import AppHostTestSupport
import Foundation
import SystemPackage
import Testing


@Suite("FileDescriptor.readAll")
struct ReadAllTests {
    /// A file of `count` bytes 0, 1, 2, … opened for reading.
    static func open(_ count: Int) throws -> (FileDescriptor, [UInt8], String) {
        let path = try makeTemporaryDirectory() + "/file"
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (try FileDescriptor.open(FilePath(path), .readOnly), bytes, path)
    }

    @Test("reads a file larger than expected by growing", arguments: [0, 1, 4095, 4096, 4097, 100_000])
    func growsPastTheExpectedSize(count: Int) throws {
        let (fd, bytes, path) = try Self.open(count)
        defer { try? fd.close(); try? FileManager.default.removeItem(atPath: path) }
        #expect(try fd.readAll(limit: 1 << 20, expected: 10) == bytes)
    }

    @Test("a /proc file, whose size fstat says is 0, is read with room for a page at once, not one byte and then two")
    func procFileGetsAPage() throws {
        let fd = try FileDescriptor.open("/proc/self/status", .readOnly)
        defer { try? fd.close() }
        let bytes = try #require(try fd.readAll(limit: 1 << 20))
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("Name:"))
        #expect(bytes.capacity >= 4096, "started at \(bytes.capacity) bytes of room")
    }

    @Test("exactly the limit is read; one byte more is nil, not a silent cut")
    func limit() throws {
        let (fd, bytes, path) = try Self.open(5000)
        defer { try? fd.close(); try? FileManager.default.removeItem(atPath: path) }
        #expect(try fd.readAll(limit: 5000, expected: 5000) == bytes)
        try fd.seek(offset: 0, from: .start)
        #expect(try fd.readAll(limit: 4999, expected: 5000) == nil)
        try fd.seek(offset: 0, from: .start)
        #expect(try fd.readAll(limit: 4999, expected: 0) == nil)
    }

    @Test("wiping copies reads the same bytes")
    func wipingCopies() throws {
        let (fd, bytes, path) = try Self.open(9000)
        defer { try? fd.close(); try? FileManager.default.removeItem(atPath: path) }
        #expect(try fd.readAll(limit: 1 << 16, expected: 1, wipingCopies: true) == bytes)
    }

    @Test("a read error comes back as its Errno")
    func readErrorIsTyped() throws {
        let path = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = try FileDescriptor.open(FilePath(path), .readOnly)
        defer { try? directory.close() }
        #expect(throws: Errno.isDirectory) { try directory.readAll(limit: 100) }
    }
}

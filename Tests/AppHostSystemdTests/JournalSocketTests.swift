import CAppHostShims
import Glibc
import Testing

@testable import AppHostSystemd

@Suite struct JournalSocketTests {
    /// The bytes journald's native protocol wants for `fields`, written out by hand.
    static func expected(_ parts: [(String, String)]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (key, value) in parts {
            if value.contains("\n") {
                bytes += Array(key.utf8) + [UInt8(ascii: "\n")]
                withUnsafeBytes(of: UInt64(value.utf8.count).littleEndian) { bytes += $0 }
                bytes += Array(value.utf8)
            } else {
                bytes += Array("\(key)=\(value)".utf8)
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    @Test("a field is a KEY=value line; one whose value breaks lines is KEY, its length as 64-bit little endian, and the value")
    func encodesTheNativeProtocol() {
        let fields = ["MESSAGE=two\nlines", "PRIORITY=6", "EMPTY=", "X_EQUALS=a=b"]
        #expect(JournalSocket.encode(fields) == Self.expected([("MESSAGE", "two\nlines"), ("PRIORITY", "6"), ("EMPTY", ""), ("X_EQUALS", "a=b")]))
        #expect(JournalSocket.encode(["MESSAGE=ok", "NO_EQUALS_SIGN"]) == nil)
        #expect(JournalSocket(path: "/run/systemd/journal/socket").send(["NO_EQUALS_SIGN"]) == -EINVAL)
    }

    @Test("a record is one datagram to the journal's socket")
    func sendsOneDatagram() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("journal"))
        #expect(JournalSocket(path: receiver.notifySocket).send(["MESSAGE=hello\nthere", "PRIORITY=5"]) == 0)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(receiver.fd, &buffer, buffer.count, 0)
        #expect(Array(buffer[..<max(count, 0)]) == Self.expected([("MESSAGE", "hello\nthere"), ("PRIORITY", "5")]))
    }

    @Test("a record too large for a datagram goes in a sealed memfd, its descriptor the datagram")
    func largeRecordGoesInAMemfd() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("journal"))
        // Past any send buffer the socket can get (8 MiB asked, doubled by the kernel).
        let message = String(repeating: "0123456789abcdef", count: 17 * 64 * 1024)
        #expect(JournalSocket(path: receiver.notifySocket).send(["MESSAGE=" + message]) == 0)

        var payload = [UInt8](repeating: 0, count: 16)
        var descriptors = [Int32](repeating: -1, count: 4)
        var count: Int32 = 0
        let received = apphost_receive_with_fds(receiver.fd, &payload, payload.count, &descriptors, 4, &count)
        #expect(received == 0)
        try #require(count == 1)
        defer { close(descriptors[0]) }
        #expect(apphost_seals(descriptors[0]) == apphost_complete_seals())
        var status = stat()
        #expect(fstat(descriptors[0], &status) == 0)
        #expect(Int(status.st_size) == message.utf8.count + "MESSAGE=\n".utf8.count)
        var head = [UInt8](repeating: 0, count: 24)
        #expect(pread(descriptors[0], &head, head.count, 0) == head.count)
        #expect(String(decoding: head, as: UTF8.self) == "MESSAGE=0123456789abcdef")
    }

    @Test("no journal at the path: a negative errno, so the handler writes the line to its fallback")
    func missingJournalIsAnError() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(JournalSocket(path: directory.file("nobody")).send(["MESSAGE=lost?"]) == -ENOENT)
    }
}

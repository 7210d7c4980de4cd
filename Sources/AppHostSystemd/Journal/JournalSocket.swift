import Glibc
import Synchronization
import SystemPackage

/// journald's native protocol, spoken directly: one datagram per record to
/// `/run/systemd/journal/socket`, each field a `KEY=value` line, or, when the value holds a line
/// break, `KEY`, a line break, the value's length as 64-bit little endian, the value and a line
/// break. A record too large for a datagram goes in a sealed memfd passed along instead
/// (SCM_RIGHTS), as `sd_journal_sendv` does. One socket serves the process (`shared`).
///
/// Not libsystemd's `sd_journal_sendv`: loading libsystemd and the six libraries it pulls in costs
/// every start about 0.5 ms and every instance 124 KiB, and the daemon links none of them.
final class JournalSocket: Sendable {
    /// The process's, to journald.
    static let shared = JournalSocket(path: JournalLogHandler.journalSocketPath)

    /// journald's socket; nil when the path cannot be an AF_UNIX address.
    let address: NotifySocketAddress?
    /// Opened at the first record; a failed attempt is tried again at the next, as libsystemd does.
    private let socket = Mutex<NotifyDatagramSocket?>(nil)

    /// A socket for the journal at `path`, opened when first used.
    init(path: String) {
        address = NotifySocketAddress(path)
    }

    /// Sends one record of `KEY=value` fields. Returns 0, or a negative errno (journald not
    /// running: `-ENOENT`; a field without `=`: `-EINVAL`).
    func send(_ fields: [String]) -> Int32 {
        guard let record = Self.encode(fields), let address else { return -EINVAL }
        do throws(Errno) {
            let datagrams = try opened(to: address)
            do {
                try datagrams.send(record)
            } catch {
                guard error == .messageTooLong || error == .noBufferSpace || error == .resourceTemporarilyUnavailable else { throw error }
                try Self.sendInMemoryFile(record, through: datagrams)
            }
            return 0
        } catch {
            return -error.rawValue
        }
    }

    /// The socket, opened now if no attempt succeeded yet; room for large records (8 MiB),
    /// past it the memfd.
    private func opened(to address: NotifySocketAddress) throws(Errno) -> NotifyDatagramSocket {
        try socket.withLock { socket throws(Errno) -> NotifyDatagramSocket in
            if let socket { return socket }
            let opened = try NotifyDatagramSocket(address: address, sendBuffer: 8 << 20)
            socket = opened
            return opened
        }
    }

    /// The record's bytes; nil when a field has no `=`.
    static func encode(_ fields: [String]) -> [UInt8]? {
        var record: [UInt8] = []
        record.reserveCapacity(fields.reduce(0) { $0 + $1.utf8.count + 1 })
        for field in fields {
            let bytes = field.utf8
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
            let value = bytes[bytes.index(after: equals)...]
            if value.contains(UInt8(ascii: "\n")) {
                record.append(contentsOf: bytes[..<equals])
                record.append(UInt8(ascii: "\n"))
                withUnsafeBytes(of: UInt64(value.count).littleEndian) { record.append(contentsOf: $0) }
                record.append(contentsOf: value)
            } else {
                record.append(contentsOf: bytes)
            }
            record.append(UInt8(ascii: "\n"))
        }
        return record
    }

    /// The record in a sealed memfd, its descriptor the datagram's only content.
    private static func sendInMemoryFile(_ record: [UInt8], through datagrams: NotifyDatagramSocket) throws(Errno) {
        let memory = try FileDescriptor.sealableMemoryFile(named: "journal-data")
        defer { try? memory.close() }
        do {
            _ = try memory.writeAll(record)
        } catch {
            throw error as? Errno ?? .ioError
        }
        try memory.addSeals(FileDescriptor.completeSeals)
        try datagrams.send([], passing: memory)
    }
}

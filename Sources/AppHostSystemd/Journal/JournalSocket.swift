import CAppHostShims
import Glibc
import Synchronization

/// journald's native protocol, spoken directly: one datagram per record to
/// `/run/systemd/journal/socket`, each field a `KEY=value` line, or, when the value holds a line
/// break, `KEY`, a line break, the value's length as 64-bit little endian, the value and a line
/// break. A record too large for a datagram goes in a sealed memfd passed along instead
/// (SCM_RIGHTS), as `sd_journal_sendv` does. One socket serves the process.
///
/// Not libsystemd's `sd_journal_sendv`: loading libsystemd and the six libraries it pulls in costs
/// every start about 0.5 ms and every instance 124 KiB, and only sd-bus still needs it.
enum JournalSocket {
    /// Where journald listens.
    static let path = "/run/systemd/journal/socket"

    /// The process's socket once one opened; -1 before (a failed attempt is tried again at
    /// the next record, as libsystemd does).
    private static let socket = Atomic<Int32>(-1)

    /// The process's socket, opened at the first record; a negative errno when it cannot be.
    private static func openSocket() -> Int32 {
        let open = socket.load(ordering: .acquiring)
        if open >= 0 { return open }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -errno }
        // Room for large records (past it, the memfd): beyond net.core.wmem_max where the
        // process may (SO_SNDBUFFORCE, root), else up to it.
        var size: Int32 = 8 << 20
        if setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let (exchanged, winner) = socket.compareExchange(expected: -1, desired: fd, ordering: .acquiringAndReleasing)
        if exchanged { return fd }
        close(fd)
        return winner
    }

    /// Sends one record of `KEY=value` fields to `path`. Returns 0, or a negative errno (journald
    /// not running: `-ENOENT`; a field without `=`: `-EINVAL`).
    static func send(_ fields: [String], to path: String = path) -> Int32 {
        guard let record = encode(fields) else { return -EINVAL }
        guard let address = NotifySocketAddress(path) else { return -EINVAL }
        let fd = openSocket()
        guard fd >= 0 else { return fd }
        let sent = address.withSocketAddress { address, length in
            record.withUnsafeBytes { bytes in
                apphost_send_with_fds(fd, address, length, bytes.baseAddress, bytes.count, nil, 0)
            }
        }
        guard sent < 0 else { return 0 }
        guard [EMSGSIZE, ENOBUFS, EAGAIN].contains(Int32(-sent)) else { return Int32(sent) }
        return sendInMemfd(record, socket: fd, to: address)
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
    private static func sendInMemfd(_ record: [UInt8], socket: Int32, to address: NotifySocketAddress) -> Int32 {
        let memfd = apphost_memfd_create_sealable("journal-data")
        guard memfd >= 0 else { return memfd }
        defer { close(memfd) }
        var offset = 0
        while offset < record.count {
            let written = record.withUnsafeBytes { write(memfd, $0.baseAddress! + offset, record.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return -errno
            }
            offset += written
        }
        let sealed = apphost_add_seals(memfd, apphost_complete_seals())
        guard sealed == 0 else { return sealed }
        var descriptor = memfd
        let sent = address.withSocketAddress { address, length in
            apphost_send_with_fds(socket, address, length, nil, 0, &descriptor, 1)
        }
        return sent < 0 ? Int32(sent) : 0
    }
}

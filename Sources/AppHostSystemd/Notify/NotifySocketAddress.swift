import Glibc

/// A `$NOTIFY_SOCKET` value as an AF_UNIX datagram address: a path (`/run/...`) or an abstract
/// name (`@name`), the two forms systemd 252 uses; also journald's socket (`JournalSocket`).
struct NotifySocketAddress: Sendable, Equatable {
    /// The bytes of `sun_path` (a leading NUL for abstract names) and the address length.
    let pathBytes: [UInt8]

    /// nil when the value is neither a path nor an abstract name, or too long for `sun_path`.
    init?(_ value: String) {
        var bytes = Array(value.utf8)
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: "/"): break
        case UInt8(ascii: "@"): bytes[0] = 0
        default: return nil
        }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard bytes.count < capacity else { return nil }
        pathBytes = bytes
    }

    /// Sends one datagram from a fresh socket, like `sd_notify` does. Returns whether it was sent.
    func send(_ payload: [UInt8]) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let sent = withSocketAddress { socketAddress, length in
            payload.withUnsafeBytes { bytes in
                sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
        return sent == payload.count
    }

    /// Calls `body` with the address as a `sockaddr` and its length.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        // Paths count their terminating NUL; abstract names are exactly their bytes.
        let length = pathOffset + pathBytes.count + (pathBytes.first == 0 ? 0 : 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}

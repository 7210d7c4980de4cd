import CAppHostShims
import Glibc
import SystemPackage

/// One AF_UNIX datagram socket, opened once, that sends to a `$NOTIFY_SOCKET` address: how the
/// fd store's pushes leave the process. They are on the request's path (before its `STATUS=`),
/// and `sd_pid_notify_with_fds` opens, tunes and closes a socket for every datagram: measured
/// here, a push's two datagrams took about 110 µs that way and about 35 µs through one socket.
/// Each datagram is addressed (`sendmsg` with the address, not `connect`), so a manager that
/// binds its socket anew is still reached.
final class NotifyDatagramSocket: Sendable {
    let address: NotifySocketAddress
    private let socket: FileDescriptor

    /// A socket for `address`, with room for datagrams of `sendBuffer` bytes if given (beyond
    /// `net.core.wmem_max` where the process may: `SO_SNDBUFFORCE`, else up to it).
    /// - Throws: the errno of `socket(2)`.
    init(address: NotifySocketAddress, sendBuffer: Int32? = nil) throws(Errno) {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        if var size = sendBuffer, setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        self.address = address
        self.socket = FileDescriptor(rawValue: fd)
    }

    deinit {
        try? socket.close()
    }

    /// Sends one datagram, `payload` (`KEY=value` lines, see `SystemdNotifier.datagram`),
    /// carrying `descriptor` if given (SCM_RIGHTS).
    /// - Throws: the errno of `sendmsg`.
    func send(_ payload: [UInt8], passing descriptor: FileDescriptor? = nil) throws(Errno) {
        var fd = descriptor?.rawValue ?? -1
        let sent = address.withSocketAddress { address, length in
            payload.withUnsafeBytes { bytes in
                apphost_send_with_fds(socket.rawValue, address, length, bytes.baseAddress, bytes.count, &fd, descriptor == nil ? 0 : 1)
            }
        }
        if sent < 0 { throw Errno(rawValue: Int32(-sent)) }
    }
}

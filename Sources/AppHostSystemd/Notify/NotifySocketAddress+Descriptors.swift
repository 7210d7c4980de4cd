import CAppHostShims
import Glibc
import SystemPackage

extension NotifySocketAddress {
    /// Sends one datagram carrying `descriptors` (SCM_RIGHTS) from a fresh socket, as
    /// `sd_pid_notify_with_fds` does: how a copy reaches the fd store.
    /// - Throws: the errno of `socket` or `sendmsg`.
    func send(_ payload: [UInt8], passing descriptors: [FileDescriptor]) throws(Errno) {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        defer { close(fd) }
        let fds = descriptors.map(\.rawValue)
        let sent = withSocketAddress { address, length in
            payload.withUnsafeBytes { bytes in
                fds.withUnsafeBufferPointer { fds in
                    apphost_send_with_fds(fd, address, length, bytes.baseAddress, bytes.count, fds.baseAddress, Int32(fds.count))
                }
            }
        }
        if sent < 0 { throw Errno(rawValue: Int32(-sent)) }
    }
}

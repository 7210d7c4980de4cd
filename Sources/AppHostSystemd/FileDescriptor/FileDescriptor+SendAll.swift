import Glibc
import SystemPackage

extension FileDescriptor {
    /// Writes all of `bytes`, as `send(MSG_NOSIGNAL)` to a socket (a peer that went away is
    /// `EPIPE`, not a SIGPIPE that ends the daemon), as `write` to anything else; `EINTR` retried.
    /// - Throws: the errno that stopped it (`EAGAIN`: a send timeout ran out).
    func sendAll(_ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let sent = send(rawValue, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                return sent >= 0 || errno != ENOTSOCK ? sent : Glibc.write(rawValue, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Errno(rawValue: errno)
            }
            offset += written
        }
    }
}

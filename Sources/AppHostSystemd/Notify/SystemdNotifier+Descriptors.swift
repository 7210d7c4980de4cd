import CSystemd
import SystemPackage

extension SystemdNotifier {
    /// Sends the fields with `descriptors` attached, for the fd store (`FDSTORE=1`): through
    /// `sd_pid_notify_with_fds` for the process's own socket, a direct `sendmsg` otherwise. Unlike
    /// `send(_:)` it says why a datagram did not go out, because a lost fd-store copy must be
    /// reported. Does nothing when notifications are off.
    /// - Throws: the errno of the failed send; `ENOTCONN` when `$NOTIFY_SOCKET` left the process
    ///   environment after this notifier was made.
    func send(_ fields: [(String, String)], passing descriptors: [FileDescriptor]) throws(Errno) {
        let text = Self.datagram(fields)
        switch transport {
        case .disabled:
            return
        case .libsystemd:
            let fds = descriptors.map(\.rawValue)
            let result = fds.withUnsafeBufferPointer { sd_pid_notify_with_fds(0, 0, text, $0.baseAddress, UInt32($0.count)) }
            if result < 0 { throw Errno(rawValue: -result) }
            if result == 0 { throw .socketNotConnected }
        case .direct(let address):
            try address.send(Array(text.utf8), passing: descriptors)
        }
    }
}

import AppHostTestSupport
import Dispatch
import Foundation
import Glibc
import Logging
import Synchronization

/// Runs `body` on a new OS thread and waits for it, so signal-mask changes stay off the
/// Swift Testing pool threads (a thread made here is gone when `body` returns).
func onFreshThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let outcome = Result { try body() }
        result.withLock { $0 = outcome }
        done.signal()
    }
    thread.start()
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A fresh directory under /tmp, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path = try makeTemporaryDirectory("apphost-systemd-tests")
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Fills a sockaddr_un from raw `sun_path` bytes and calls `body` with it and its length.
func withUnixAddress<R>(pathBytes: [UInt8], _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
    let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
    let length = offset + pathBytes.count + (pathBytes.first == 0 ? 0 : 1)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
    }
}

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket.
final class DatagramReceiver {
    let fd: Int32
    /// The value to put in `$NOTIFY_SOCKET`.
    let notifySocket: String
    private let pathToRemove: String?

    /// Binds `path`, or the abstract name `@name` when `path` starts with "@".
    init(_ path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var bytes = Array(path.utf8)
        if path.hasPrefix("@") { bytes[0] = 0 }
        let bound = withUnixAddress(pathBytes: bytes) { bind(fd, $0, $1) }
        guard fd >= 0, bound == 0 else {
            let code = errno
            if fd >= 0 { close(fd) }
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        self.fd = fd
        // Bounds a failing test only: a sent datagram is already queued when receive() runs.
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        notifySocket = path
        pathToRemove = path.hasPrefix("@") ? nil : path
    }

    /// The next datagram as text, or nil after the timeout.
    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Whether a datagram is waiting (non-blocking peek).
    var hasPending: Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    deinit {
        close(fd)
        if let pathToRemove { unlink(pathToRemove) }
    }
}

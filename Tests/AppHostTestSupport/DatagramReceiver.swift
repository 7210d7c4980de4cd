#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket: put `notifySocket` in
/// a process's `$NOTIFY_SOCKET` and read what its `sd_notify` sends. Closed, and its file
/// removed, by `close()` or when the last reference goes.
public final class DatagramReceiver: Sendable {
    /// The socket.
    public let fd: Int32
    /// The value to put in `$NOTIFY_SOCKET`: the path, or `@name` for an abstract socket.
    public let notifySocket: String
    private let pathToRemove: String?
    private let isClosed = Atomic(false)

    /// Binds `path`, or the abstract name `@name` when `path` starts with "@".
    /// - Parameter receiveBufferSize: `SO_RCVBUF`, for a sender that may send much before it is read.
    /// - Throws: `DatagramReceiverError` when the socket cannot be made or bound.
    public init(_ path: String, receiveBufferSize: Int32? = nil) throws {
        var bytes = Array(path.utf8)
        if path.hasPrefix("@") { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw DatagramReceiverError(description: "socket path too long: \(path)")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DatagramReceiverError(description: "socket: \(String(cString: strerror(errno)))") }
        guard withUnixAddress(pathBytes: bytes, { bind(fd, $0, $1) }) == 0 else {
            let message = String(cString: strerror(errno))
            closeDescriptor(fd)
            throw DatagramReceiverError(description: "bind \(path): \(message)")
        }
        if var size = receiveBufferSize {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // Bounds a failing test's receive() only: a datagram sent is already queued when it runs.
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
        notifySocket = path
        pathToRemove = path.hasPrefix("@") ? nil : path
    }

    /// The next datagram as text, waiting for it up to 3 s; nil after that.
    public func receive() -> String? {
        receive(flags: 0)
    }

    /// The next datagram as text if one comes within `milliseconds`, else nil.
    public func receive(withinMilliseconds milliseconds: Int32) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) > 0 else { return nil }
        return receive(flags: Int32(MSG_DONTWAIT))
    }

    /// Every datagram waiting now, oldest first, without blocking.
    public func receiveAll() -> [String] {
        var texts: [String] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 { if errno == EINTR { continue } else { break } }
            texts.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
        return texts
    }

    /// Whether a datagram is waiting (non-blocking peek).
    public var hasPending: Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    /// Closes the socket and removes its file; again does nothing.
    public func close() {
        guard !isClosed.exchange(true, ordering: .relaxed) else { return }
        closeDescriptor(fd)
        if let pathToRemove { unlink(pathToRemove) }
    }

    deinit {
        close()
    }

    private func receive(flags: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, flags) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// A datagram's `KEY=value` lines as a dictionary (`READY=1\nSTATUS=active` → both).
    public static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return fields
    }
}

/// The C library's `close`, which the receiver's own `close()` hides inside it.
private func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// A `DatagramReceiver` could not be made: what failed, with errno's text.
public struct DatagramReceiverError: Error, CustomStringConvertible {
    public let description: String
}

/// Fills a sockaddr_un from raw `sun_path` bytes (a leading 0 for an abstract name) and calls
/// `body` with it and its length.
public func withUnixAddress<R>(pathBytes: [UInt8], _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
    let offset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
    let length = offset + pathBytes.count + (pathBytes.first == 0 ? 0 : 1)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
    }
}

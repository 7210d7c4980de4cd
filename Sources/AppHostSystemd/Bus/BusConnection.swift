import Glibc
import SystemPackage

/// A client connection to a D-Bus bus, spoken directly: `AUTH EXTERNAL` with the process's uid,
/// `Hello`, then messages. The daemon needs a few calls and replies on it, and libsystemd's
/// sd-bus, loaded for them, cost each instance about 150 KiB and each start its loading.
///
/// Blocking, for one thread: calls wait for their reply until a deadline (a bus that stops
/// answering is an error, not a hang); messages that arrive meanwhile are kept for
/// `nextMessage()`. The descriptor is for a caller's `poll()`.
package final class BusConnection {
    /// The bus driver's name, path and interface.
    static let driver = "org.freedesktop.DBus"
    static let driverPath = "/org/freedesktop/DBus"
    /// How many calls to this connection a blocking call keeps while it waits.
    static let queueLimit = 64

    let address: BusAddress
    /// The connection's unique name (`:1.42`), from `Hello`.
    private(set) var uniqueName = ""
    private let socket: FileDescriptor
    private var isOpen = true
    private var input: [UInt8] = []
    private var queued: [BusMessage] = []
    private var lastSerial: UInt32 = 0

    /// The descriptor to poll for `POLLIN`.
    var fileDescriptor: Int32 { socket.rawValue }

    /// Connects, authenticates and says `Hello`, each step within `timeout`.
    package init(address: BusAddress, timeout: Duration = .seconds(25)) throws(BusError) {
        let deadline = ContinuousClock.now + timeout
        var failure = BusError.unsupportedAddress(address.text)
        var connected: FileDescriptor?
        for endpoint in address.sockets where connected == nil {
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .system(step: "socket", Errno(rawValue: errno)) }
            if endpoint.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0 {
                connected = FileDescriptor(rawValue: fd)
            } else {
                failure = .system(step: "no bus at \(address.text)", Errno(rawValue: errno))
                Glibc.close(fd)
            }
        }
        guard let connected else { throw failure }
        self.address = address
        self.socket = connected
        var sendTimeout = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        _ = setsockopt(connected.rawValue, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        do {
            try authenticate(until: deadline)
            let hello = try call(.call(destination: Self.driver, path: Self.driverPath, interface: Self.driver, member: "Hello"), step: "Hello", until: deadline)
            var reader = hello.bodyReader
            uniqueName = try reader.string()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    package func close() {
        guard isOpen else { return }
        isOpen = false
        try? socket.close()
    }

    /// Sends `message` with the next serial; returns the serial, which its reply names.
    @discardableResult
    func send(_ message: BusMessage) throws(BusError) -> UInt32 {
        var message = message
        lastSerial &+= 1
        if lastSerial == 0 { lastSerial = 1 }
        message.serial = lastSerial
        try write(message.encoded(), step: message.member ?? message.errorName ?? "a reply")
        return message.serial
    }

    /// Sends a method call and waits for its reply until `deadline`.
    /// - Throws: `.replied` for an error reply; `.timedOut`, `.ended`, `.system` for the bus.
    package func call(_ message: BusMessage, step: String, until deadline: ContinuousClock.Instant) throws(BusError) -> BusMessage {
        let serial = try send(message)
        var skipped: [BusMessage] = []
        defer { queued.insert(contentsOf: skipped, at: 0) }
        while true {
            while let next = try takeMessage() {
                guard next.replySerial == serial, next.kind == .methodReturn || next.kind == .error else {
                    // Calls to this connection wait for `nextMessage()`, up to a bound; signals
                    // (`NameAcquired`) and stray replies nobody waits for are dropped.
                    if next.kind == .methodCall, queued.count + skipped.count < Self.queueLimit { skipped.append(next) }
                    continue
                }
                if next.kind == .error { throw .replied(name: next.errorName ?? "", message: next.errorMessage) }
                return next
            }
            try fill(until: deadline, step: step)
        }
    }

    /// `RequestName` without queueing: the reply's code (1 owner, 3 owned by another, 4 already ours).
    func requestName(_ name: String, until deadline: ContinuousClock.Instant) throws(BusError) -> UInt32 {
        var arguments = BusWriter()
        arguments.string(name)
        arguments.uint32(4)  // DBUS_NAME_FLAG_DO_NOT_QUEUE, as sd_bus_request_name without flags
        let reply = try call(.call(destination: Self.driver, path: Self.driverPath, interface: Self.driver, member: "RequestName", signature: "su", body: arguments.bytes), step: "RequestName", until: deadline)
        var reader = reply.bodyReader
        return try reader.uint32()
    }

    /// The next message received and not yet taken, if a whole one is in.
    func nextMessage() throws(BusError) -> BusMessage? {
        if !queued.isEmpty { return queued.removeFirst() }
        return try takeMessage()
    }

    /// Reads what the socket has now (after `poll()` said so), without waiting.
    /// - Throws: `.ended` once the bus closed the connection.
    func receiveAvailable() throws(BusError) {
        try read(step: "reading", flags: Int32(MSG_DONTWAIT))
    }

    private func takeMessage() throws(BusError) -> BusMessage? {
        guard let length = try BusMessage.length(atStartOf: input), input.count >= length else { return nil }
        let message = try BusMessage(decoding: Array(input[..<length]))
        input.removeFirst(length)
        return message
    }

    /// `AUTH EXTERNAL` with the effective uid in hex-encoded decimal, as every D-Bus client.
    private func authenticate(until deadline: ContinuousClock.Instant) throws(BusError) {
        let uid = Array(String(geteuid()).utf8)
        let hex = uid.map { String($0, radix: 16) }.joined()
        try write([0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8), step: "authentication")
        while !input.contains(UInt8(ascii: "\n")) {
            guard input.count < 512 else { throw .rejected("a line of \(input.count) bytes") }
            try fill(until: deadline, step: "authentication")
        }
        let end = input.firstIndex(of: UInt8(ascii: "\n"))!
        let line = String(decoding: input[..<end], as: UTF8.self).trimmingSuffix("\r")
        input.removeFirst(end + 1)
        guard line.hasPrefix("OK ") else { throw .rejected(line) }
        try write(Array("BEGIN\r\n".utf8), step: "authentication")
    }

    private func fill(until deadline: ContinuousClock.Instant, step: String) throws(BusError) {
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw .timedOut(step: step) }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno != EINTR { throw .system(step: step, Errno(rawValue: errno)) }
            if ready > 0 {
                try read(step: step, flags: Int32(MSG_DONTWAIT))
                return
            }
        }
    }

    private func read(step: String, flags: Int32) throws(BusError) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket.rawValue, $0.baseAddress, $0.count, flags) }
            if count > 0 {
                input.append(contentsOf: chunk[..<count])
                if count < chunk.count { return }
                continue
            }
            if count == 0 { throw .ended(step: step) }
            switch errno {
            case EINTR: continue
            case EAGAIN: return
            case ECONNRESET: throw .ended(step: step)
            case let code: throw .system(step: step, Errno(rawValue: code))
            }
        }
    }

    private func write(_ bytes: [UInt8], step: String) throws(BusError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(socket.rawValue, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent >= 0 {
                offset += sent
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN: throw .timedOut(step: step)
            case EPIPE, ECONNRESET: throw .ended(step: step)
            case let code: throw .system(step: step, Errno(rawValue: code))
            }
        }
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

import Glibc
import SystemPackage

/// A client connection to a D-Bus bus, spoken directly: `AUTH EXTERNAL` with the process's uid,
/// `Hello`, then messages. The daemon needs a few calls and replies on it, and libsystemd's
/// sd-bus, loaded for them, cost each instance about 150 KiB and each start its loading.
///
/// Blocking, for one thread: calls wait for their reply until a deadline (a bus that stops
/// answering is an error, not a hang); calls to this connection that arrive meanwhile are kept
/// for `nextMessage()`. The descriptor is for a caller's `poll()`. What a peer sends can end
/// the connection with an error but never trap: a message longer than `BusMessage.maximumLength`
/// is skipped unread, one of an unknown type ignored.
package final class BusConnection {
    /// The bus driver's name (also its interface) and path.
    static let driver = "org.freedesktop.DBus"
    static let driverPath = "/org/freedesktop/DBus"
    /// How many calls to this connection a blocking call keeps while it waits.
    static let queueLimit = 16

    private let socket: FileDescriptor
    /// A descriptor whose readability ends any wait (`BusError.cancelled`).
    private let cancel: Int32?
    private var isOpen = true
    /// Received bytes from `inputStart` on; what is before it was taken.
    private var input: [UInt8] = []
    private var inputStart = 0
    /// Bytes of an over-long message still to be dropped as they arrive.
    private var skipping = 0
    private var queued: [BusMessage] = []
    private var lastSerial: UInt32 = 0

    /// Connects, authenticates and says `Hello` by `deadline`; a readable `cancel` (an eventfd
    /// a shutdown writes) ends this and every later wait at once.
    package init(address: BusAddress, until deadline: ContinuousClock.Instant, cancel: Int32? = nil) throws(BusError) {
        self.cancel = cancel
        var failure = BusError.unsupportedAddress(address.text)
        var connected: FileDescriptor?
        // A send timeout bounds connect() too (a bus whose backlog is full) and every write.
        let timeout = max(deadline - ContinuousClock.now, .milliseconds(1)).wholeMicroseconds
        var sendTimeout = timeval(tv_sec: Int(timeout / 1_000_000), tv_usec: Int(timeout % 1_000_000))
        for endpoint in address.sockets where connected == nil {
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .system(step: "socket", Errno(rawValue: errno)) }
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
            if endpoint.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0 {
                connected = FileDescriptor(rawValue: fd)
            } else {
                failure = .system(step: "no bus at \(address.text)", Errno(rawValue: errno))
                Glibc.close(fd)
            }
        }
        guard let connected else { throw failure }
        self.socket = connected
        do {
            try authenticate(until: deadline)
            let hello = try call(.call(destination: Self.driver, path: Self.driverPath, interface: Self.driver, member: "Hello"), step: "Hello", until: deadline)
            var reader = hello.bodyReader
            _ = try reader.string()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the connection; the bus forgets the names it owned.
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
        while true {
            while let next = try takeMessage() {
                guard next.replySerial == serial, next.kind == .methodReturn || next.kind == .error else {
                    // Calls to this connection wait for `nextMessage()`, up to a bound; signals
                    // (`NameAcquired`) and stray replies nobody waits for are dropped.
                    if next.kind == .methodCall, queued.count < Self.queueLimit { queued.append(next) }
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

    /// Waits, without a deadline, until the bus sends more, and reads it.
    /// - Throws: `.cancelled` once `cancel` is woken; `.ended` once the bus closed the connection.
    func waitForInput() throws(BusError) {
        try fill(until: nil, step: "reading")
    }

    private func takeMessage() throws(BusError) -> BusMessage? {
        while true {
            guard let length = try BusMessage.length(of: input, at: inputStart) else { return nil }
            guard length <= BusMessage.maximumLength else {
                let buffered = min(length, input.count - inputStart)
                skipping = length - buffered
                consume(buffered)
                return nil
            }
            guard input.count - inputStart >= length else { return nil }
            let bytes = Array(input[inputStart..<inputStart + length])
            consume(length)
            if let message = try BusMessage(decoding: bytes) { return message }
        }
    }

    private func consume(_ count: Int) {
        inputStart += count
        if inputStart == input.count {
            input.removeAll(keepingCapacity: true)
            inputStart = 0
        } else if inputStart >= 1 << 16 {
            input.removeFirst(inputStart)
            inputStart = 0
        }
    }

    /// `AUTH EXTERNAL` with the effective uid in hex-encoded decimal, as every D-Bus client.
    private func authenticate(until deadline: ContinuousClock.Instant) throws(BusError) {
        let hex = String(geteuid()).utf8.map { String($0, radix: 16) }.joined()
        try write([0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8), step: "authentication")
        while !input.contains(UInt8(ascii: "\n")) {
            guard input.count < 512 else { throw .rejected("a line of \(input.count) bytes") }
            try fill(until: deadline, step: "authentication")
        }
        let end = input.firstIndex(of: UInt8(ascii: "\n"))!
        let line = String(decoding: input[..<end].prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        consume(end + 1)
        guard line.hasPrefix("OK ") else {
            // Said as the bus said it, if it is text: no raw bytes into the journal.
            let printable = line.utf8.count <= 200 && line.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }
            throw .rejected(printable ? line : "\(line.utf8.count) bytes that are not a D-Bus reply")
        }
        try write(Array("BEGIN\r\n".utf8), step: "authentication")
    }

    /// Waits until the socket has bytes, or `deadline` (none: for good), and reads them.
    private func fill(until deadline: ContinuousClock.Instant?, step: String) throws(BusError) {
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else { throw .timedOut(step: step) }
                milliseconds = Int32(clamping: remaining.wholeMicroseconds / 1000 + 1)
            }
            var descriptors = [
                pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: cancel ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0, errno != EINTR { throw .system(step: step, Errno(rawValue: errno)) }
            if descriptors[1].revents != 0 { throw .cancelled }
            if ready > 0 {
                try read(step: step)
                return
            }
        }
    }

    /// One `recv` of what is there, at most 4 KiB: the caller takes the messages in before it
    /// reads more, so a flood cannot grow the buffer without end.
    private func read(step: String) throws(BusError) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(socket.rawValue, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                let dropped = min(skipping, count)
                skipping -= dropped
                input.append(contentsOf: chunk[dropped..<count])
                return
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
        do {
            try socket.sendAll(bytes)
        } catch {
            switch error {
            case .resourceTemporarilyUnavailable: throw .timedOut(step: step)
            case .brokenPipe, .connectionReset: throw .ended(step: step)
            default: throw .system(step: step, error)
            }
        }
    }
}

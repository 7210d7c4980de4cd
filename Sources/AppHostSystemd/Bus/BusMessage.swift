/// One D-Bus message: what the daemon sends (encoded little-endian) and what it reads (either
/// byte order). Only the header fields the daemon uses have names; a body stays bytes, written
/// with `BusWriter` and read with `BusReader`.
package struct BusMessage: Sendable, Equatable {
    /// The message types of the spec.
    package enum Kind: UInt8, Sendable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    /// The header flag that says the caller wants no reply.
    static let noReplyExpected: UInt8 = 0x1

    package var kind: Kind
    package var flags: UInt8 = 0
    /// The sender's number for it, which a reply names as `replySerial`.
    package var serial: UInt32 = 0
    // The header fields, named as in the spec.
    package var path: String?
    package var interface: String?
    package var member: String?
    package var errorName: String?
    package var replySerial: UInt32?
    package var destination: String?
    /// The sender's unique name, which the bus fills in.
    package var sender: String?
    /// The body's signature ("" for none).
    package var signature = ""
    package var body: [UInt8] = []
    /// Whether `body` is big-endian (as its sender wrote it).
    package var bigEndian = false

    /// The largest message the daemon reads (the spec allows 128 MiB; the calls it answers are
    /// a few hundred bytes). A longer one is skipped unread (`BusConnection`).
    static let maximumLength = 1 << 20

    /// A method call to `destination`.
    package static func call(destination: String?, path: String, interface: String, member: String, signature: String = "", body: [UInt8] = []) -> BusMessage {
        BusMessage(kind: .methodCall, path: path, interface: interface, member: member, destination: destination, signature: signature, body: body)
    }

    /// The reply to this call, carrying `body` of `signature`.
    func reply(signature: String = "", body: [UInt8] = []) -> BusMessage {
        BusMessage(kind: .methodReturn, flags: Self.noReplyExpected, replySerial: serial, destination: sender, signature: signature, body: body)
    }

    /// The error reply to this call: a D-Bus error name and a message for people.
    func errorReply(_ name: String, _ message: String) -> BusMessage {
        var writer = BusWriter()
        writer.string(message)
        return BusMessage(kind: .error, flags: Self.noReplyExpected, errorName: name, replySerial: serial, destination: sender, signature: "s", body: writer.bytes)
    }

    package var wantsReply: Bool { kind == .methodCall && flags & Self.noReplyExpected == 0 }

    /// A body reader, aligned from the body's start.
    package var bodyReader: BusReader { BusReader(body, bigEndian: bigEndian) }

    /// The first string of an error's body, its message for people.
    package var errorMessage: String {
        guard signature.hasPrefix("s") else { return "" }
        var reader = bodyReader
        return (try? reader.string()) ?? ""
    }

    /// The wire bytes, with `serial` as given.
    func encoded() -> [UInt8] {
        var writer = BusWriter()
        writer.byte(UInt8(ascii: "l"))
        writer.byte(kind.rawValue)
        writer.byte(flags)
        writer.byte(1)
        writer.uint32(UInt32(body.count))
        writer.uint32(serial)
        writer.array(elementAlignment: 8) { fields in
            func field(_ code: UInt8, _ type: String, _ value: (inout BusWriter) -> Void) {
                fields.structure { entry in
                    entry.byte(code)
                    entry.variant(type, value)
                }
            }
            if let path { field(1, "o") { $0.string(path) } }
            if let interface { field(2, "s") { $0.string(interface) } }
            if let member { field(3, "s") { $0.string(member) } }
            if let errorName { field(4, "s") { $0.string(errorName) } }
            if let replySerial { field(5, "u") { $0.uint32(replySerial) } }
            if let destination { field(6, "s") { $0.string(destination) } }
            if !signature.isEmpty { field(8, "g") { $0.signature(signature) } }
        }
        writer.pad(to: 8)
        return writer.bytes + body
    }

    /// The length of the message whose fixed header (16 bytes) starts `buffer` at `start`;
    /// nil before those bytes are in.
    /// - Throws: `.malformed` for a byte order mark that is neither `l` nor `B`: the stream
    ///   cannot be framed any further.
    static func length(of buffer: [UInt8], at start: Int = 0) throws(BusError) -> Int? {
        guard buffer.count - start >= 16 else { return nil }
        let bigEndian = try byteOrder(buffer[start])
        var reader = BusReader(buffer, from: start, to: start + 16, bigEndian: bigEndian)
        _ = try reader.uint32()
        let bodyLength = Int(try reader.uint32())
        _ = try reader.uint32()
        let fieldsLength = Int(try reader.uint32())
        return (16 + fieldsLength + 7) & ~7 + bodyLength
    }

    fileprivate static func byteOrder(_ mark: UInt8) throws(BusError) -> Bool {
        switch mark {
        case UInt8(ascii: "l"): return false
        case UInt8(ascii: "B"): return true
        default: throw .malformed("an unknown byte order mark")
        }
    }
}

extension BusMessage {
    /// The message that fills `bytes` (as `length(of:)` measured it); nil for a message type
    /// the spec added after these four, which a client ignores.
    init?(decoding bytes: [UInt8]) throws(BusError) {
        let bigEndian = try Self.byteOrder(bytes.first ?? 0)
        var reader = BusReader(bytes, bigEndian: bigEndian)
        _ = try reader.byte()
        guard let kind = Kind(rawValue: try reader.byte()) else { return nil }
        self.kind = kind
        self.bigEndian = bigEndian
        flags = try reader.byte()
        guard try reader.byte() == 1 else { throw .malformed("a protocol version other than 1") }
        let bodyLength = Int(try reader.uint32())
        serial = try reader.uint32()
        let fieldsLength = Int(try reader.uint32())
        try reader.align(8)
        let fieldsEnd = reader.offset + fieldsLength
        while reader.offset < fieldsEnd {
            try reader.align(8)
            let code = try reader.byte()
            let type = try reader.signature()
            switch (code, type) {
            case (1, "o"): path = try reader.string()
            case (2, "s"): interface = try reader.string()
            case (3, "s"): member = try reader.string()
            case (4, "s"): errorName = try reader.string()
            case (5, "u"): replySerial = try reader.uint32()
            case (6, "s"): destination = try reader.string()
            case (7, "s"): sender = try reader.string()
            case (8, "g"): signature = try reader.signature()
            default: try reader.skip(Substring(type))
            }
        }
        guard reader.offset == fieldsEnd else { throw .malformed("header fields past their array's end") }
        try reader.align(8)
        guard reader.offset + bodyLength == bytes.count else { throw .malformed("a body length that does not match") }
        body = Array(bytes[reader.offset...])
    }
}

extension RestorableState {
    /// The format version this binary writes and the newest it reads.
    public static let formatVersion: UInt8 = 1
    static let magic: [UInt8] = Array("AHRS".utf8)
    /// Magic, version, generation, payload length.
    static let headerSize = 4 + 1 + 8 + 4

    /// How many bytes `encoded()` makes, without making them.
    package var encodedSize: Int {
        let fields = services.reduce(0) { $0 + 8 + $1.key.utf8.count + $1.value.count }
        return Self.headerSize + 2 + 4 + sessionLockReason.utf8.count + 4 + fields + 4
    }

    /// The bytes a storage keeps: a header (magic `AHRS`, format version, generation, payload
    /// length), the payload, and a CRC-32 of everything before it. Little-endian throughout.
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encodedSize)
        bytes += Self.magic
        bytes.append(Self.formatVersion)
        bytes.appendInteger(generation)
        let payloadSizePosition = bytes.count
        bytes.appendInteger(UInt32(0))
        let payloadStart = bytes.count
        bytes.append(isInBackground ? 1 : 0)
        bytes.append(isSessionLocked ? 1 : 0)
        bytes.appendField(sessionLockReason.utf8)
        bytes.appendInteger(UInt32(services.count))
        // In name order: the same state always makes the same bytes.
        for (name, field) in services.sorted(by: { $0.key < $1.key }) {
            bytes.appendField(name.utf8)
            bytes.appendField(field)
        }
        bytes.setInteger(UInt32(bytes.count - payloadStart), at: payloadSizePosition)
        bytes.appendInteger(CRC32.checksum(bytes))
        return bytes
    }

    /// Reads what `encoded()` wrote.
    /// - Throws: `RestorableStateFormatError` naming what is wrong; never traps on bad input.
    public init(decoding bytes: [UInt8]) throws(RestorableStateFormatError) {
        guard bytes.count <= Self.maximumEncodedSize else { throw .tooLarge(size: bytes.count) }
        guard bytes.count >= Self.headerSize + 4 else { throw .truncated(size: bytes.count) }
        guard Array(bytes[0..<4]) == Self.magic else { throw .notRestorableState }
        // The payload ends where the checksum starts: a field never reads into it.
        var reader = ByteReader(bytes: bytes[..<(bytes.count - 4)], position: 4)
        let version = try reader.byte()
        guard version >= 1 else { throw .malformed("format version 0 does not exist") }
        guard version <= Self.formatVersion else { throw .newerVersion(version) }
        let generation = try reader.integer(UInt64.self)
        let payloadSize = Int(try reader.integer(UInt32.self))
        guard bytes.count == Self.headerSize + payloadSize + 4 else {
            throw bytes.count < Self.headerSize + payloadSize + 4 ? .truncated(size: bytes.count) : .malformed("\(bytes.count - Self.headerSize - payloadSize - 4) bytes after the checksum")
        }
        var trailer = ByteReader(bytes: bytes[...], position: bytes.count - 4)
        guard try trailer.integer(UInt32.self) == CRC32.checksum(bytes[..<(bytes.count - 4)]) else { throw .checksumMismatch }
        let isInBackground = try reader.flag()
        let isSessionLocked = try reader.flag()
        guard let reason = String(validating: try reader.field(), as: UTF8.self) else { throw .malformed("the lock reason is not UTF-8") }
        let count = Int(try reader.integer(UInt32.self))
        var services: [String: [UInt8]] = [:]
        for _ in 0..<count {
            guard let name = String(validating: try reader.field(), as: UTF8.self), !name.isEmpty else { throw .malformed("a service name is empty or not UTF-8") }
            guard services.updateValue(try reader.field(), forKey: name) == nil else { throw .malformed("service \"\(name)\" appears twice") }
        }
        guard reader.position == bytes.count - 4 else { throw .malformed("\(bytes.count - 4 - reader.position) bytes left over in the payload") }
        self.init(generation: generation, isInBackground: isInBackground, isSessionLocked: isSessionLocked, sessionLockReason: reason, services: services)
    }
}

/// Reads the format's fields, throwing instead of reading past the end.
private struct ByteReader {
    let bytes: ArraySlice<UInt8>
    var position: Int

    mutating func byte() throws(RestorableStateFormatError) -> UInt8 {
        guard position < bytes.endIndex else { throw .malformed("ends inside a field") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func flag() throws(RestorableStateFormatError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let other: throw .malformed("flag byte \(other)")
        }
    }

    mutating func integer<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(RestorableStateFormatError) -> T {
        var value: T = 0
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { value |= T(try byte()) << shift }
        return value
    }

    mutating func field() throws(RestorableStateFormatError) -> [UInt8] {
        let size = Int(try integer(UInt32.self))
        guard size <= bytes.endIndex - position else { throw .malformed("a field of \(size) bytes runs past the end") }
        defer { position += size }
        return Array(bytes[position..<(position + size)])
    }
}

extension [UInt8] {
    fileprivate mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func setInteger<T: FixedWidthInteger>(_ value: T, at position: Int) {
        Swift.withUnsafeBytes(of: value.littleEndian) { replaceSubrange(position..<(position + $0.count), with: $0) }
    }

    fileprivate mutating func appendField<Field: Collection<UInt8>>(_ field: Field) {
        appendInteger(UInt32(field.count))
        append(contentsOf: field)
    }
}

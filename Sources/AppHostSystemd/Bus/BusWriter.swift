/// Marshals values in D-Bus's wire format, little-endian, each aligned to its size from the
/// start of the bytes (a body starts 8-aligned in its message, so alignment holds there too).
package struct BusWriter {
    /// What was written so far.
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// Zero bytes up to the next multiple of `alignment`.
    package mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    package mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    package mutating func uint32(_ value: UInt32) {
        pad(to: 4)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func int32(_ value: Int32) {
        uint32(UInt32(bitPattern: value))
    }

    /// A string (`s`) or an object path (`o`), cut at its first NUL as a C string would be:
    /// the bus drops a connection that sends a NUL inside a string.
    package mutating func string(_ value: String) {
        let utf8 = value.utf8.prefix { $0 != 0 }
        uint32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    /// A signature (`g`): the daemon's own, at most 255 bytes.
    package mutating func signature(_ value: String) {
        let utf8 = Array(value.utf8)
        precondition(utf8.count <= 255, "a D-Bus signature of \(utf8.count) bytes")
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    /// An array whose elements `body` writes; `elementAlignment` is the element type's (8 for
    /// structs and dict entries), which the padding after the length follows even when empty.
    package mutating func array(elementAlignment: Int, _ body: (inout BusWriter) -> Void) {
        pad(to: 4)
        let lengthOffset = bytes.count
        uint32(0)
        pad(to: elementAlignment)
        let start = bytes.count
        body(&self)
        let length = UInt32(bytes.count - start).littleEndian
        withUnsafeBytes(of: length) { raw in
            for index in 0..<4 { bytes[lengthOffset + index] = raw[index] }
        }
    }

    /// A struct or a dict entry: 8-aligned.
    package mutating func structure(_ body: (inout BusWriter) -> Void) {
        pad(to: 8)
        body(&self)
    }

    /// A variant holding one value of `signature`, which `body` writes.
    package mutating func variant(_ signature: String, _ body: (inout BusWriter) -> Void) {
        self.signature(signature)
        body(&self)
    }
}

/// Marshals values in D-Bus's wire format, little-endian, each aligned to its size from the
/// start of the bytes (a body starts 8-aligned in its message, so alignment holds there too).
package struct BusWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

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

    package mutating func boolean(_ value: Bool) {
        uint32(value ? 1 : 0)
    }

    package mutating func int32(_ value: Int32) {
        uint32(UInt32(bitPattern: value))
    }

    /// A string (`s`) or an object path (`o`).
    package mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        uint32(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    /// A signature (`g`): one byte of length.
    package mutating func signature(_ value: String) {
        let utf8 = Array(value.utf8)
        bytes.append(UInt8(truncatingIfNeeded: utf8.count))
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

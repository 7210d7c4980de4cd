/// Reads values in D-Bus's wire format from a message's bytes, in the order the message says,
/// each aligned from `origin` (the message's or its body's first byte). Every read is
/// bounds-checked: a peer's bad length is a `BusError.malformed`, never a trap.
package struct BusReader {
    private let bytes: [UInt8]
    private let origin: Int
    private let end: Int
    private let bigEndian: Bool
    /// Where the next value starts.
    package private(set) var offset: Int

    /// A reader of `bytes[start..<end]`, aligned from `start`.
    package init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil, bigEndian: Bool = false) {
        self.bytes = bytes
        self.origin = start
        self.offset = start
        self.end = end ?? bytes.count
        self.bigEndian = bigEndian
    }

    /// Moves past the padding before a value of `alignment`.
    package mutating func align(_ alignment: Int) throws(BusError) {
        let padding = (alignment - (offset - origin) % alignment) % alignment
        try need(padding)
        offset += padding
    }

    package mutating func byte() throws(BusError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func uint32() throws(BusError) -> UInt32 {
        try align(4)
        try need(4)
        var value: UInt32 = 0
        for index in 0..<4 {
            let byte = UInt32(bytes[offset + (bigEndian ? 3 - index : index)])
            value |= byte << (8 * UInt32(index))
        }
        offset += 4
        return value
    }

    /// A string (`s`) or an object path (`o`).
    package mutating func string() throws(BusError) -> String {
        let length = Int(try uint32())
        return try text(length: length)
    }

    package mutating func signature() throws(BusError) -> String {
        let length = Int(try byte())
        return try text(length: length)
    }

    /// Moves past one value of the single complete type that starts `signature` (a header
    /// field this reader does not use, an argument after the ones it reads). Variants and
    /// containers nest at most 64 deep, as the spec allows: deeper is a malformed message, not
    /// a stack overflow.
    package mutating func skip(_ signature: Substring, depth: Int = 0) throws(BusError) {
        guard depth < 64 else { throw .malformed("values nested more than 64 deep") }
        guard let code = signature.first else { throw .malformed("an empty type") }
        switch code {
        case "y": try need(1); offset += 1
        case "n", "q": try align(2); try need(2); offset += 2
        case "b", "i", "u", "h": try align(4); try need(4); offset += 4
        case "x", "t", "d": try align(8); try need(8); offset += 8
        case "s", "o": _ = try string()
        case "g": _ = try self.signature()
        case "v":
            let inner = try self.signature()
            try skip(Substring(inner), depth: depth + 1)
        case "a":
            let length = Int(try uint32())
            let element = signature.dropFirst()
            try align(Self.alignment(of: element))
            try need(length)
            offset += length
        case "(", "{":
            try align(8)
            var rest = signature.dropFirst()
            while let first = rest.first, first != ")", first != "}" {
                try skip(rest, depth: depth + 1)
                rest = rest.dropFirst(try Self.completeTypeLength(rest))
            }
        default:
            throw .malformed("the type code \(code)")
        }
    }

    /// The length of the single complete type that starts `signature`.
    static func completeTypeLength(_ signature: Substring) throws(BusError) -> Int {
        guard let code = signature.first else { throw .malformed("an empty type") }
        switch code {
        case "a": return 1 + (try completeTypeLength(signature.dropFirst()))
        case "(", "{":
            var depth = 0
            for (index, character) in signature.enumerated() {
                if character == "(" || character == "{" { depth += 1 }
                if character == ")" || character == "}" { depth -= 1 }
                if depth == 0 { return index + 1 }
            }
            throw .malformed("an unclosed struct in \(signature)")
        default: return 1
        }
    }

    static func alignment(of signature: Substring) -> Int {
        switch signature.first {
        case "n", "q": 2
        case "b", "i", "u", "h", "s", "o", "a": 4
        case "x", "t", "d", "(", "{": 8
        default: 1
        }
    }

    private func need(_ count: Int) throws(BusError) {
        guard count >= 0, offset + count <= end else { throw .malformed("a value past the message's end") }
    }

    private mutating func text(length: Int) throws(BusError) -> String {
        try need(length + 1)
        guard bytes[offset + length] == 0 else { throw .malformed("a string without its NUL") }
        defer { offset += length + 1 }
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }
}

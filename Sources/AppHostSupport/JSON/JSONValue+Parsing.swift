extension JSONValue {
    /// Deepest nesting a state file may have; deeper is corruption, not state.
    static let depthLimit = 32

    /// Parses one JSON value that makes up all of `bytes` (RFC 8259), strictly: no trailing
    /// commas, comments or text after it.
    package init<Bytes: Collection>(parsing bytes: Bytes) throws(FormatError) where Bytes.Element == UInt8 {
        var reader = Reader(bytes: Array(bytes))
        self = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.offset == reader.bytes.count else { throw reader.error("text after the value") }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func value(depth: Int) throws(FormatError) -> JSONValue {
            skipSpace()
            guard depth < JSONValue.depthLimit else { throw error("nesting deeper than \(JSONValue.depthLimit)") }
            switch peek() {
            case UInt8(ascii: "{"):
                offset += 1
                var members: [String: JSONValue] = [:]
                skipSpace()
                if peek() == UInt8(ascii: "}") { offset += 1; return .object(members) }
                while true {
                    skipSpace()
                    let key = try string()
                    try expect(UInt8(ascii: ":"))
                    members[key] = try value(depth: depth + 1)
                    skipSpace()
                    if peek() == UInt8(ascii: ",") { offset += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    return .object(members)
                }
            case UInt8(ascii: "["):
                offset += 1
                var items: [JSONValue] = []
                skipSpace()
                if peek() == UInt8(ascii: "]") { offset += 1; return .array(items) }
                while true {
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    if peek() == UInt8(ascii: ",") { offset += 1; continue }
                    try expect(UInt8(ascii: "]"))
                    return .array(items)
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case nil: throw error("the end of the text where a value belongs")
            default: return .number(try number())
            }
        }

        mutating func string() throws(FormatError) -> String {
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
            offset += 1
            var text: [UInt8] = []
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let string = String(validating: text, as: UTF8.self) else { throw error("a string that is not UTF-8") }
                    return string
                case UInt8(ascii: "\\"):
                    guard offset < bytes.count else { break }
                    let escape = bytes[offset]
                    offset += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard peek() == UInt8(ascii: "\\") else { throw error("a lone surrogate") }
                            offset += 1
                            guard peek() == UInt8(ascii: "u") else { throw error("a lone surrogate") }
                            offset += 1
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate") }
                            scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("a lone surrogate") }
                        text.append(contentsOf: String(Character(unicode)).utf8)
                    default:
                        throw error("an unknown escape")
                    }
                case 0..<0x20:
                    throw error("a control character inside a string")
                default:
                    text.append(byte)
                }
            }
            throw error("an unterminated string")
        }

        mutating func hex4() throws(FormatError) -> UInt32 {
            guard offset + 4 <= bytes.count,
                  let text = String(validating: bytes[offset..<(offset + 4)], as: UTF8.self),
                  let value = UInt32(text, radix: 16) else { throw error("a bad \\u escape") }
            offset += 4
            return value
        }

        mutating func number() throws(FormatError) -> Double {
            let start = offset
            func digits() -> Int {
                let first = offset
                while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
                return offset - first
            }
            if peek() == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw error("a value that is not JSON") }
            if peek() == UInt8(ascii: ".") {
                offset += 1
                guard digits() > 0 else { throw error("a number without digits after the point") }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                offset += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
                guard digits() > 0 else { throw error("a number without exponent digits") }
            }
            // Double("1e400") is infinity, which JSON cannot write back (it renders as null).
            guard let text = String(validating: bytes[start..<offset], as: UTF8.self), let value = Double(text), value.isFinite else {
                throw error("a number out of range")
            }
            return value
        }

        mutating func literal(_ word: String) throws(FormatError) {
            let spelling = Array(word.utf8)
            guard bytes.count - offset >= spelling.count, bytes[offset..<(offset + spelling.count)].elementsEqual(spelling) else {
                throw error("a value that is not JSON")
            }
            offset += spelling.count
        }

        mutating func expect(_ byte: UInt8) throws(FormatError) {
            skipSpace()
            guard peek() == byte else { throw error("expected \"\(Character(Unicode.Scalar(byte)))\"") }
            offset += 1
        }

        mutating func skipSpace() {
            while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
        }

        func peek() -> UInt8? {
            offset < bytes.count ? bytes[offset] : nil
        }

        func error(_ problem: String) -> FormatError {
            FormatError("\(problem) at byte \(offset)")
        }
    }
}

import Glibc

/// A path from the command line kept as the bytes given, inside a `String`.
///
/// Linux paths are bytes, not text: `caf\xe9.yaml` (Latin-1) is a valid file name that is not
/// UTF-8. `CommandLine.arguments` would replace the byte and the file could not be opened. Here
/// each byte that is not part of valid UTF-8 becomes the private-use scalar U+10FF00 + byte
/// (the way Python's `surrogateescape` keeps them), so the path travels as a `String`, opens as
/// the original bytes, and shows with the byte escaped.
package enum RawPath {
    private static let base: UInt32 = 0x10FF00

    /// The argument `argument` (a C string) with its bytes kept.
    package static func decode(_ argument: UnsafePointer<CChar>) -> String {
        let count = strlen(argument)
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: count)
        return decode(Array(bytes))
    }

    /// `bytes` as a string: valid UTF-8 as it is, every other byte as U+10FF00 + byte.
    package static func decode(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: isEscape) { return text }
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length = lead < 0x80 ? 1 : lead >> 5 == 0b110 ? 2 : lead >> 4 == 0b1110 ? 3 : lead >> 3 == 0b11110 ? 4 : 0
            // A scalar of the escape range given as UTF-8 is escaped byte by byte too: taken as
            // it is, `bytes(_:)` would turn it into one byte (a fuzzer's finding).
            if length > 0, index + length <= bytes.count,
                let character = String(validating: bytes[index..<index + length], as: UTF8.self),
                !character.unicodeScalars.contains(where: isEscape) {
                scalars.append(contentsOf: character.unicodeScalars)
                index += length
            } else {
                scalars.append(Unicode.Scalar(base + UInt32(lead))!)
                index += 1
            }
        }
        return String(scalars)
    }

    /// Whether `scalar` stands for one byte that was not UTF-8.
    private static func isEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= base && scalar.value <= base + 0xFF
    }

    /// The bytes to open: the original ones.
    package static func bytes(_ path: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                bytes.append(UInt8(scalar.value - base))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// The path for messages: kept bytes as `\xHH`.
    static func displayed(_ path: String) -> String {
        guard path.unicodeScalars.contains(where: isEscape) else { return path }
        var text = ""
        for scalar in path.unicodeScalars {
            if isEscape(scalar) {
                let hex = String(scalar.value - base, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }
}

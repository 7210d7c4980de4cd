/// The stable id of one installation: made on its first launch, kept in its state directory.
///
/// A random (version 4) UUID, written as Foundation's `UUID.uuidString` writes one
/// (`56DD86DC-522B-4402-8894-E1F3217DDD93`), so ids kept by earlier versions read back equal.
public struct InstallationID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// A new random id.
    public init() {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        self.bytes = bytes
    }

    /// The id `text` spells (`8-4-4-4-12` hexadecimal digits, either case), or nil.
    public init?(_ text: String) {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.utf8.count) == [8, 4, 4, 4, 12] else { return nil }
        var bytes: [UInt8] = []
        for group in groups {
            var rest = Substring(group)
            while !rest.isEmpty {
                guard let byte = UInt8(rest.prefix(2), radix: 16) else { return nil }
                bytes.append(byte)
                rest = rest.dropFirst(2)
            }
        }
        self.bytes = bytes
    }

    /// Upper-case `8-4-4-4-12` hexadecimal.
    public var description: String {
        let digits = "0123456789ABCDEF".map { $0 }
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// Encoded as its text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Decodes the text `encode(to:)` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = InstallationID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(text) is not a UUID")
        }
        self = id
    }
}

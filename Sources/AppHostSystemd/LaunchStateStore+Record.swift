import Foundation

extension LaunchStateStore.Record {
    /// Why `launch-state.json` could not be read.
    struct FormatError: Error, CustomStringConvertible {
        let description: String
    }

    /// The record as `JSONEncoder` with `.prettyPrinted` and `.sortedKeys` writes it.
    var json: [UInt8] {
        Array("""
            {
              "installationID" : "\(installationID.uuidString)",
              "lastLaunch" : "\(ISO8601Timestamp.string(from: lastLaunch))",
              "launchCount" : \(launchCount)
            }
            """.utf8)
    }

    /// Reads a flat JSON object with the three keys, in any order and spacing; other keys whose
    /// values are strings or integers are ignored, as `JSONDecoder` would.
    init(json bytes: [UInt8]) throws(FormatError) {
        var reader = FlatJSONReader(bytes: bytes)
        let fields = try reader.object()
        func string(_ key: String) throws(FormatError) -> String {
            guard case .string(let value)? = fields[key] else { throw FormatError(description: "\"\(key)\" is missing or not a string") }
            return value
        }
        guard let installationID = UUID(uuidString: try string("installationID")) else {
            throw FormatError(description: "\"installationID\" is not a UUID")
        }
        guard let lastLaunch = ISO8601Timestamp.date(from: try string("lastLaunch")) else {
            throw FormatError(description: "\"lastLaunch\" is not an ISO 8601 date")
        }
        guard case .integer(let launchCount)? = fields["launchCount"], launchCount >= 0 else {
            throw FormatError(description: "\"launchCount\" is missing or not a count")
        }
        self.init(installationID: installationID, launchCount: launchCount, lastLaunch: lastLaunch)
    }
}

/// A reader for one JSON object whose values are strings or integers: what the launch state is.
private struct FlatJSONReader {
    enum Value: Equatable {
        case string(String)
        case integer(Int)
    }

    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func object() throws(LaunchStateStore.Record.FormatError) -> [String: Value] {
        var fields: [String: Value] = [:]
        try expect(UInt8(ascii: "{"))
        if peek() == UInt8(ascii: "}") {
            offset += 1
        } else {
            while true {
                let key = try string()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                fields[key] = peek() == UInt8(ascii: "\"") ? .string(try string()) : .integer(try integer())
                skipSpace()
                if peek() == UInt8(ascii: ",") {
                    offset += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                break
            }
        }
        skipSpace()
        guard offset == bytes.count else { throw error("text after the object") }
        return fields
    }

    private mutating func string() throws(LaunchStateStore.Record.FormatError) -> String {
        try expect(UInt8(ascii: "\""))
        var text: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: text, as: UTF8.self) else { throw error("a string is not UTF-8") }
                return string
            case UInt8(ascii: "\\"):
                guard offset < bytes.count, [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/")].contains(bytes[offset]) else {
                    throw error("an escape other than \\\", \\\\ or \\/")
                }
                text.append(bytes[offset])
                offset += 1
            case 0..<0x20:
                throw error("a control character inside a string")
            default:
                text.append(byte)
            }
        }
        throw error("an unterminated string")
    }

    private mutating func integer() throws(LaunchStateStore.Record.FormatError) -> Int {
        let start = offset
        if peek() == UInt8(ascii: "-") { offset += 1 }
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        guard let text = String(validating: bytes[start..<offset], as: UTF8.self), let value = Int(text) else {
            throw error("a value that is neither a string nor an integer")
        }
        return value
    }

    private mutating func expect(_ byte: UInt8) throws(LaunchStateStore.Record.FormatError) {
        skipSpace()
        guard peek() == byte else { throw error("expected \"\(Character(Unicode.Scalar(byte)))\"") }
        offset += 1
    }

    private mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    private func peek() -> UInt8? {
        offset < bytes.count ? bytes[offset] : nil
    }

    private func error(_ problem: String) -> LaunchStateStore.Record.FormatError {
        LaunchStateStore.Record.FormatError(description: "\(problem) at byte \(offset)")
    }
}

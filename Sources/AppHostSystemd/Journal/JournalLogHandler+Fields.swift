import CSystemd
import Glibc
import Logging

extension JournalLogHandler {
    /// The fields the handler sets itself; metadata keys that map onto them get an `X_` prefix
    /// instead of overwriting the message or priority.
    static let ownFieldNames: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC", "LOGGER",
    ]

    /// The syslog priority of a swift-log level: trace/debug 7, info 6, notice 5, warning 4,
    /// error 3, critical 2.
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A metadata key as a journal field name: uppercased, every character outside `[A-Z0-9_]`
    /// becomes `_`, at most 64 characters. Names journald would reject or treat as trusted (leading
    /// digit or `_`, empty) and names of the handler's own fields get an `X_` prefix.
    /// "service" → SERVICE, "message-id" → MESSAGE_ID, "9lives" → X_9LIVES, "message" → X_MESSAGE.
    static func journalFieldName(_ key: String) -> String {
        var name = String(String.UnicodeScalarView(key.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar {
            case "A"..."Z", "0"..."9", "_": scalar
            case "a"..."z": Unicode.Scalar(scalar.value - 32)!
            default: "_"
            }
        }))
        if name.isEmpty || name.first == "_" || name.first!.isNumber || ownFieldNames.contains(name) {
            name = "X_" + name
        }
        return String(name.prefix(64))
    }

    /// The `KEY=value` entries of one native journal record, in a stable order (metadata sorted).
    func journalFields(
        level: Logger.Level, message: String, metadata: Logger.Metadata, error: String?,
        file: String, function: String, line: UInt
    ) -> [String] {
        var fields = [
            "MESSAGE=\(message)",
            "PRIORITY=\(Self.syslogPriority(level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(file)",
            "CODE_LINE=\(line)",
            "CODE_FUNC=\(function)",
            "LOGGER=\(label)",
        ]
        var seen = Self.ownFieldNames
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let name = Self.journalFieldName(key)
            guard seen.insert(name).inserted else { continue }
            fields.append("\(name)=\(value)")
        }
        if let error, seen.insert("ERROR").inserted {
            fields.append("ERROR=\(error)")
        }
        return fields
    }

    /// One plain record: `<N>message key=value ...` and a newline; every line of a multi-line
    /// message carries the prefix so journald keeps the priority of each. Unprefixed (for a
    /// terminal), warnings and worse start with their level instead (`warning: …`).
    func plainLine(level: Logger.Level, message: String, metadata: Logger.Metadata, error: String?, prefixed: Bool = true) -> String {
        let prefix: String
        if prefixed {
            prefix = "<\(Self.syslogPriority(level))>"
        } else {
            prefix = level >= .warning ? "\(level): " : ""
        }
        // Most messages are one line: no split by Character (grapheme breaking) for them.
        var text = message.utf8.contains(UInt8(ascii: "\n"))
            ? message.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }.joined(separator: "\n")
            : prefix + message
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            text += " \(key)=\(Self.quoted(value.description))"
        }
        if let error, metadata["error"] == nil {
            text += " error=\(Self.quoted(error))"
        }
        return text + "\n"
    }

    /// A metadata value as one token: bare when it is, quoted and escaped when it has spaces,
    /// quotes, `=` or control characters (or is empty).
    static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains {
            // The control characters (general category Cc) are exactly these two ranges; asking the
            // scalar's properties would look each one up in the Unicode tables.
            $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || $0.value < 0x20 || (0x7F...0x9F).contains($0.value)
        }
        guard needsQuotes else { return value }
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Sends one record of `KEY=value` fields with `sd_journal_sendv`. Returns 0, or a negative
    /// errno. The fields go out of one buffer: one allocation per record, not one per field.
    static func sendToJournal(_ fields: [String]) -> Int32 {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fields.reduce(0) { $0 + $1.utf8.count })
        var ends: [Int] = []
        ends.reserveCapacity(fields.count)
        for field in fields {
            bytes.append(contentsOf: field.utf8)
            ends.append(bytes.count)
        }
        return bytes.withUnsafeMutableBytes { buffer in
            var start = 0
            var vectors = ends.map { end -> iovec in
                defer { start = end }
                return iovec(iov_base: buffer.baseAddress.map { $0 + start }, iov_len: end - start)
            }
            return vectors.withUnsafeMutableBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }
}

import Foundation

extension SystemdSandbox {
    /// Journal records (from `journalctl -o json`) matching `matches` (`FIELD=value` or options
    /// such as `--user-unit=NAME`), oldest first. Binary fields are decoded as UTF-8 and repeated
    /// fields joined with newlines.
    func journal(_ matches: [String]) async throws -> [[String: String]] {
        let result = try await run(["journalctl", "--directory=/run/log/journal", "-o", "json", "--no-pager", "-q"] + matches)
        // journalctl exits non-zero (with a note on stderr) for some empty results; only a failure
        // without any output is an error.
        if !result.succeeded, result.stdout.isEmpty, !result.stderr.isEmpty, !result.stderr.contains("No entries") {
            throw HarnessError("journalctl failed: \(result)")
        }
        return result.stdout.split(separator: "\n").compactMap { Self.decodeRecord(Substring($0)) }
    }

    /// Records of a user unit: `--user-unit=` (the unit's own output and the manager's messages
    /// about it).
    func journal(userUnit unit: String) async throws -> [[String: String]] {
        try await journal(["--user-unit=\(unit)"])
    }

    /// The last `count` records as short `PRIORITY IDENTIFIER: MESSAGE` lines, for failure messages.
    func journalTail(_ matches: [String] = [], count: Int = 30) async -> String {
        guard let records = try? await journal(matches + ["-n", "\(count)"]) else { return "(journal unreadable)" }
        return records.map { record in
            "[\(record["PRIORITY"] ?? "-")] \(record["SYSLOG_IDENTIFIER"] ?? record["_COMM"] ?? "?"): \(record["MESSAGE"] ?? "")"
        }.joined(separator: "\n")
    }

    static func decodeRecord(_ line: Substring) -> [String: String]? {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        var record: [String: String] = [:]
        for (key, value) in object {
            record[key] = decodeValue(value)
        }
        return record
    }

    private static func decodeValue(_ value: Any) -> String {
        switch value {
        case let text as String:
            return text
        case let bytes as [Int]:
            return String(decoding: bytes.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
        case let many as [Any]:
            return many.map(decodeValue).joined(separator: "\n")
        case let number as NSNumber:
            return number.stringValue
        default:
            return ""
        }
    }
}

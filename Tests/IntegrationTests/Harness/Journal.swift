import Foundation

/// Reading a journal with `journalctl -o json`, one way for the sandbox's journald and for the
/// booted system's: the command, when its answer is a failure, and how a record decodes.
enum Journal {
    /// `journalctl` with JSON output and no pager, then `arguments`.
    static func command(_ arguments: [String]) -> [String] {
        ["journalctl", "-o", "json", "--no-pager", "-q"] + arguments
    }

    /// The records `result` printed, oldest first. journalctl exits non-zero (with a note on
    /// stderr) for some empty results; only a failure without any output is an error.
    static func records(_ result: CommandResult) throws -> [[String: String]] {
        if !result.succeeded, result.stdout.isEmpty, !result.stderr.isEmpty, !result.stderr.contains("No entries") {
            throw HarnessError("journalctl failed: \(result)")
        }
        return result.stdout.split(separator: "\n").compactMap { decodeRecord($0) }
    }

    /// One line of `-o json`: binary fields are decoded as UTF-8 and repeated fields joined with
    /// newlines.
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

extension SystemdSandbox {
    /// Journal records (from `journalctl -o json`) matching `matches` (`FIELD=value` or options
    /// such as `--user-unit=NAME`), oldest first. Binary fields are decoded as UTF-8 and repeated
    /// fields joined with newlines.
    func journal(_ matches: [String]) async throws -> [[String: String]] {
        try Journal.records(try await run(Journal.command(["--directory=/run/log/journal"] + matches)))
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
}

extension SystemManager {
    /// The cursor of the journal's newest record, to read only what comes after it.
    func journalCursor() async throws -> String? {
        let result = try await run(Journal.command(["-n", "1"]))
        return result.stdout.split(separator: "\n").last.flatMap { Journal.decodeRecord($0) }?["__CURSOR"]
    }

    /// Journal records matching `matches` (options such as `-u UNIT` or `FIELD=value`), after
    /// `cursor` when given, oldest first.
    ///
    /// Why `--cursor` and not `--after-cursor`: with matches, journalctl 252 seeks to the cursor
    /// and skips one record more, which is the first match when the cursor's own record does not
    /// match. `--cursor` starts at the first match from the cursor on; the cursor's own record,
    /// when it matches, is dropped here.
    func journal(_ matches: [String], after cursor: String? = nil) async throws -> [[String: String]] {
        let from = cursor.map { ["--cursor=\($0)"] } ?? []
        return try Journal.records(try await run(Journal.command(from + matches)))
            .filter { cursor == nil || $0["__CURSOR"] != cursor }
    }

    /// The unit's journal as `[PRIORITY] IDENTIFIER: MESSAGE` lines (after `cursor`), for failure
    /// messages.
    func journalText(unit: String, after cursor: String? = nil, count: Int = 40) async -> String {
        guard let records = try? await journal(["-u", unit], after: cursor) else { return "(journal unreadable)" }
        return records.suffix(count).map(Self.line).joined(separator: "\n")
    }

    /// One record as `[PRIORITY] IDENTIFIER[TRANSPORT]: MESSAGE`.
    static func line(_ record: [String: String]) -> String {
        "[\(record["PRIORITY"] ?? "-")] \(record["SYSLOG_IDENTIFIER"] ?? record["_COMM"] ?? "?")[\(record["_TRANSPORT"] ?? "?")]: \(record["MESSAGE"] ?? "")"
    }
}

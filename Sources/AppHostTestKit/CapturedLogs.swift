import Logging

/// One log record a component wrote.
public struct CapturedLogRecord: Sendable, Hashable, CustomStringConvertible {
    /// The record's level.
    public let level: Logger.Level
    /// The message, as text.
    public let message: String
    /// The logger's metadata merged with the record's, values as text.
    public let metadata: [String: String]
    /// The logger's label.
    public let label: String

    /// A record with the given values.
    public init(level: Logger.Level, message: String, metadata: [String: String] = [:], label: String = "test") {
        self.level = level
        self.message = message
        self.metadata = metadata
        self.label = label
    }

    public var description: String { "\(level): \(message)" }
}

/// Every record written through its loggers, in order, so a test can check what a service or
/// the host logged and await a record instead of sleeping.
public final class CapturedLogs: Sendable {
    /// The records, awaitable.
    public let records = TestLog<CapturedLogRecord>()

    /// An empty capture.
    public init() {}

    /// A logger whose records land here.
    public func logger(label: String = "test") -> Logger {
        Logger(label: label) { label in CapturingLogHandler(label: label, logs: self) }
    }

    /// Every record so far.
    public var all: [CapturedLogRecord] { records.all }

    /// The messages so far, in order.
    public var messages: [String] { records.all.map(\.message) }

    /// The first record (already written or still to come) that matches `predicate`; nil after
    /// `timeout`.
    public func first(
        timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable (CapturedLogRecord) -> Bool
    ) async -> CapturedLogRecord? {
        await records.first(timeout: timeout, where: predicate)
    }
}

/// A `LogHandler` that keeps every record in a `CapturedLogs`. A value type, as swift-log
/// expects: each `Logger` copy has its own metadata and level; the records are shared.
public struct CapturingLogHandler: LogHandler {
    /// Where the records go.
    public let logs: CapturedLogs
    /// The label of the logger this handler serves.
    public let label: String
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    /// A handler that writes to `logs`.
    public init(label: String = "test", logs: CapturedLogs) {
        self.label = label
        self.logs = logs
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        for (key, value) in event.metadata ?? [:] { merged[key] = value }
        logs.records.append(CapturedLogRecord(
            level: event.level,
            message: event.message.description,
            metadata: merged.mapValues { "\($0)" },
            label: label
        ))
    }
}

import Logging

/// A `LogHandler` that keeps every record in a `CapturedLogs`. A value type, as swift-log
/// expects: each `Logger` copy has its own metadata and level; the records are shared.
public struct CapturingLogHandler: LogHandler {
    /// Where the records go.
    public let logs: CapturedLogs
    /// The label of the logger this handler serves.
    public let label: String
    /// The logger's own metadata, merged into every record.
    public var metadata: Logger.Metadata = [:]
    /// Everything is captured by default.
    public var logLevel: Logger.Level = .trace
    /// Metadata from the task's context (`Logger.MetadataProvider.hostRequestID`), merged under
    /// the logger's own.
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler that writes to `logs`.
    public init(label: String = "test", logs: CapturedLogs) {
        self.label = label
        self.logs = logs
    }

    /// One item of the logger's metadata.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Keeps the record, with the logger's metadata and the record's merged.
    public func log(event: LogEvent) {
        var merged = metadataProvider?.get() ?? [:]
        for (key, value) in metadata { merged[key] = value }
        for (key, value) in event.metadata ?? [:] { merged[key] = value }
        logs.records.append(CapturedLogRecord(
            level: event.level,
            message: event.message.description,
            metadata: merged.mapValues { "\($0)" },
            label: label
        ))
    }
}

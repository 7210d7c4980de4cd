import Logging

/// Every record written through its loggers, in order, so a test can check what a service or
/// the host logged and await a record instead of sleeping.
public final class CapturedLogs: Sendable {
    /// The records, awaitable.
    public let records = TestLog<CapturedLogRecord>()

    /// An empty capture.
    public init() {}

    /// A logger whose records land here, each with the host request it was written for
    /// (`request_id`, as the daemon's journal records have it).
    public func logger(label: String = "test") -> Logger {
        Logger(label: label) { label in
            var handler = CapturingLogHandler(label: label, logs: self)
            handler.metadataProvider = .hostRequestID
            return handler
        }
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

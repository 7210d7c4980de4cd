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

    /// `warning: slow`.
    public var description: String { "\(level): \(message)" }
}

import Foundation

/// One thing analytics counts, as it is stored in the event log.
struct AnalyticsEvent: Codable, Sendable, Hashable {
    enum Kind: String, Codable, Sendable {
        /// A launch; `first` and `previousExit` say which kind.
        case launch
        /// The application entered the background.
        case background
        /// The application returned to the foreground.
        case foreground
        /// Time spent active, in `seconds`.
        case foregroundTime
        /// Time spent in the background, in `seconds`.
        case backgroundTime
        /// A memory warning of `level`.
        case memoryWarning
        /// The configuration was reloaded.
        case reload
        /// The session locked.
        case sessionLock
        /// The application terminated cleanly.
        case terminate
    }

    /// Increasing across the log and the summary, so a record already folded into the summary
    /// (a crash between writing the summary and truncating the log) is not counted twice.
    var seq: UInt64
    var kind: Kind
    /// Seconds since 1970.
    var at: Double
    var first: Bool?
    var previousExit: String?
    var seconds: Double?
    var level: String?

    init(seq: UInt64, kind: Kind, at: Date = Date(), first: Bool? = nil, previousExit: String? = nil, seconds: Double? = nil, level: String? = nil) {
        self.seq = seq
        self.kind = kind
        self.at = at.timeIntervalSince1970
        self.first = first
        self.previousExit = previousExit
        self.seconds = seconds
        self.level = level
    }
}

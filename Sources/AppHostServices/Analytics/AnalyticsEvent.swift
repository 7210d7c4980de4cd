import AppHost
import AppHostSupport

/// One thing analytics counts, as it is stored in the event log.
package struct AnalyticsEvent: Sendable, Hashable {
    enum Kind: String, Sendable {
        /// A launch; `first`, `previousExit` and `exitCause` say which kind.
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
        /// The host restarted `service` under its `RestartPolicy` (`ServiceDidRestart`).
        case restart
        /// The machine slept for `seconds` (`MachineDidResume`).
        case sleep
        /// The watched logind session's screen locked (`ScreenLockDidChange`).
        case screenLock
        /// A significant time change, with its `cause` (`clock,midnight`).
        case timeChange
        /// Time the network path was unavailable, in `seconds`.
        case offlineTime
        /// Time in low power mode, in `seconds`.
        case lowPowerTime
        /// Time on battery, in `seconds`.
        case batteryTime
    }

    /// Increasing across the log and the summary, so a record already folded into the summary
    /// (a crash between writing the summary and truncating the log) is not counted twice.
    var seq: UInt64
    var kind: Kind
    /// Seconds since 1970.
    var at: Double
    var first: Bool?
    var previousExit: String?
    /// Why the previous run ended (`ExitCause.description`), on a launch that can tell.
    var exitCause: String?
    var seconds: Double?
    var level: String?
    /// The instance name of the service a restart was of.
    var service: String?
    /// What changed, in a time change: the request's cause.
    var cause: String?

    init(
        seq: UInt64, kind: Kind, at: UnixTime = .now, first: Bool? = nil, previousExit: String? = nil, exitCause: String? = nil,
        seconds: Double? = nil, level: String? = nil, service: String? = nil, cause: String? = nil
    ) {
        self.seq = seq
        self.kind = kind
        self.at = at.secondsSince1970
        self.first = first
        self.previousExit = previousExit
        self.exitCause = exitCause
        self.seconds = seconds
        self.level = level
        self.service = service
        self.cause = cause
    }

    /// The record as the log keeps it: one JSON object, keys sorted, absent fields left out.
    var json: JSONValue {
        .object([
            "seq": .number(Double(seq)),
            "kind": .string(kind.rawValue),
            "at": .number(at),
            "first": first.map(JSONValue.bool),
            "previousExit": previousExit.map(JSONValue.string),
            "exitCause": exitCause.map(JSONValue.string),
            "seconds": seconds.map(JSONValue.number),
            "level": level.map(JSONValue.string),
            "service": service.map(JSONValue.string),
            "cause": cause.map(JSONValue.string),
        ])
    }

    /// The record `json` holds, or nil when it is not one.
    init?(json: JSONValue) {
        guard let seq = json["seq"]?.integer, seq >= 0, let kind = json["kind"]?.string.flatMap(Kind.init(rawValue:)),
              let at = json["at"]?.number
        else { return nil }
        self.seq = UInt64(seq)
        self.kind = kind
        self.at = at
        first = json["first"]?.bool
        previousExit = json["previousExit"]?.string
        exitCause = json["exitCause"]?.string
        seconds = json["seconds"]?.number
        level = json["level"]?.string
        service = json["service"]?.string
        cause = json["cause"]?.string
    }

    /// The sequence number of a whole record of a kind this version does not count (written by
    /// a newer apphostd), or nil when `json` is not one. Such a record is skipped, not taken for
    /// a corrupt tail: a downgrade must not cut the records after it from the log.
    static func sequenceOfUnknownKind(_ json: JSONValue) -> UInt64? {
        guard let seq = json["seq"]?.integer, seq >= 0, let kind = json["kind"]?.string, Kind(rawValue: kind) == nil,
              json["at"]?.number != nil
        else { return nil }
        return UInt64(seq)
    }
}

import ServiceContextModule

/// What changed in the time the machine keeps, as `applicationSignificantTimeChange` learns it:
/// the causes UIKit's `significantTimeChangeNotification` stands for, each with the word that
/// names it in the request's cause (`CAUSE=timezone` in the journal, `APPHOST_TIME_CHANGE` for
/// exec). Changes that come while one waits arrive together, as one call with every cause.
public struct SignificantTimeChange: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The wall clock was set or jumped (`clock`).
    public static let clock = SignificantTimeChange(rawValue: 1 << 0)
    /// The machine's time zone changed (`timezone`).
    public static let timezone = SignificantTimeChange(rawValue: 1 << 1)
    /// The local day changed: midnight passed, or a sleep crossed it (`midnight`).
    public static let midnight = SignificantTimeChange(rawValue: 1 << 2)
    /// The zone's offset from UTC changed: daylight saving time began or ended
    /// (`daylight-saving`).
    public static let daylightSaving = SignificantTimeChange(rawValue: 1 << 3)

    /// Each cause with its word, in the order the words are written.
    public static let words: [(cause: SignificantTimeChange, word: String)] = [
        (.clock, "clock"), (.timezone, "timezone"), (.midnight, "midnight"), (.daylightSaving, "daylight-saving"),
    ]

    /// The causes as the words of a request's cause, comma-separated: `clock,midnight`.
    public var description: String {
        Self.words.filter { contains($0.cause) }.map(\.word).joined(separator: ",")
    }

    /// The causes a request's cause names; words of other causes (`sleep`) are left out. Nil
    /// when it names none.
    public init?(causes text: String) {
        var change: SignificantTimeChange = []
        for word in text.split(separator: ",") {
            if let known = Self.words.first(where: { $0.word == word }) { change.insert(known.cause) }
        }
        guard !change.isEmpty else { return nil }
        self = change
    }
}

extension ServiceContext {
    /// What changed, in the request of `applicationSignificantTimeChange`; nil in any other.
    public var significantTimeChange: SignificantTimeChange? {
        hostRequestCause.flatMap(SignificantTimeChange.init(causes:))
    }
}

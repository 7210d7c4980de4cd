/// A moment of wall-clock time: seconds since 1970-01-01T00:00:00Z.
///
/// The core keeps no clock of its own (it is pure Swift); `LaunchStateStorage` gives the launch
/// its date. Written and read as ISO 8601 in UTC, `2026-11-24T16:20:05Z`, the form launch state
/// and analytics keep, with no Foundation and no time-zone data.
public struct UnixTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Seconds since 1970-01-01T00:00:00Z; negative before.
    public var secondsSince1970: Double

    /// The moment `secondsSince1970` after the epoch.
    public init(secondsSince1970: Double) {
        self.secondsSince1970 = secondsSince1970
    }

    /// The moment `text` names, or nil when it is not `YYYY-MM-DDTHH:MM:SSZ` of a real date.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        let days = Self.days(year: year, month: month, day: day)
        guard Self.civil(days: days) == (year, month, day) else { return nil }
        self.init(secondsSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// ISO 8601 in UTC, whole seconds: `2026-11-24T16:20:05Z`.
    public var iso8601: String {
        let whole = Int(secondsSince1970.rounded(.down))
        let (days, seconds) = (whole.floorDivided(by: 86_400), whole.floorModulo(86_400))
        let (year, month, day) = Self.civil(days: days)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
            + "T\(padded(seconds / 3600, 2)):\(padded(seconds % 3600 / 60, 2)):\(padded(seconds % 60, 2))Z"
    }

    /// The ISO 8601 form.
    public var description: String { iso8601 }

    public static func < (lhs: UnixTime, rhs: UnixTime) -> Bool {
        lhs.secondsSince1970 < rhs.secondsSince1970
    }

    /// Encoded as its ISO 8601 text, as launch state and analytics summaries always were.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }

    /// Decodes the ISO 8601 text `encode(to:)` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let time = UnixTime(iso8601: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected a UTC timestamp like 2026-11-24T16:20:05Z, found \(text)")
        }
        self = time
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let year = month <= 2 ? year - 1 : year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int) -> Int {
        self - floorDivided(by: divisor) * divisor
    }
}

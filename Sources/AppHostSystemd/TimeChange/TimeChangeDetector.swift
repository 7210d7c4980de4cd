import AppHost

/// Decides what a wake-up of the time-change source means, PID 1's way: a cancelled
/// `CLOCK_REALTIME` timer (the clock was set, or the machine resumed), the timer reaching the
/// next boundary (local midnight, or the zone's next change of offset), or `/etc/localtime`
/// changing. Pure: the clock is the caller's.
package struct TimeChangeDetector {
    /// One significant change, and the journal's line for it.
    package struct Change: Sendable, Equatable {
        package var causes: SignificantTimeChange
        package var message: String
        /// How far the wall clock moved against the boot clock, in nanoseconds (`clock`).
        package var moved: Int64?
    }

    /// A step smaller than this is no change: the two clocks after a resume differ by the
    /// RTC's rounding, and a resume alone is not a change.
    package static let stepThreshold: Int64 = 2_000_000_000

    private let clock: any WallClock
    private(set) package var zone: String?
    /// The local day (days since 1970 in the zone), the zone's offset, and realtime − boottime
    /// when last looked.
    private var day: Int64
    private var offset: Int64
    private var skew: Int64

    package init(clock: any WallClock, zone: String?) {
        self.clock = clock
        self.zone = zone
        let now = clock.now()
        let seconds = Self.seconds(now.realtime)
        offset = clock.utcOffset(at: seconds)
        day = Self.day(of: seconds, offset: offset)
        skew = now.realtime - now.boottime
    }

    /// After the timer was cancelled or reached its boundary: what changed since the last look.
    package mutating func timerWoke() -> Change? {
        let now = clock.now()
        var causes: SignificantTimeChange = []
        var parts: [String] = []
        let moved = (now.realtime - now.boottime) - skew
        skew = now.realtime - now.boottime
        if abs(moved) >= Self.stepThreshold {
            causes.insert(.clock)
            parts.append("the clock moved \(Self.describe(moved))")
        }
        parts += lookAtTheDay(now: Self.seconds(now.realtime), causes: &causes)
        guard !causes.isEmpty else { return nil }
        return Change(causes: causes, message: parts.joined(separator: "; "), moved: causes.contains(.clock) ? moved : nil)
    }

    /// After `/etc/localtime` changed and the zone was read again as `zone`.
    package mutating func zoneRead(_ newZone: String?) -> Change? {
        guard newZone != zone else { return nil }
        zone = newZone
        let seconds = Self.seconds(clock.now().realtime)
        offset = clock.utcOffset(at: seconds)
        let newDay = Self.day(of: seconds, offset: offset)
        var causes: SignificantTimeChange = .timezone
        var message = "the time zone is now \(newZone ?? "unnamed")"
        if newDay != day {
            causes.insert(.midnight)
            message += "; the local day changed with it"
        }
        day = newDay
        return Change(causes: causes, message: message, moved: nil)
    }

    /// When the timer goes off next, in seconds since 1970: the earlier of the next local
    /// midnight and the zone's next change of offset before it.
    package func nextBoundary() -> Int64 {
        let now = Self.seconds(clock.now().realtime)
        let offsetNow = clock.utcOffset(at: now)
        let midnight = (Self.day(of: now, offset: offsetNow) + 1) * 86_400 - offsetNow
        guard clock.utcOffset(at: midnight) != offsetNow else { return max(midnight, now + 1) }
        // The offset changes before that midnight: find the second it does.
        var (low, high) = (now, midnight)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if clock.utcOffset(at: middle) == offsetNow { low = middle } else { high = middle }
        }
        return max(high, now + 1)
    }

    private mutating func lookAtTheDay(now: Int64, causes: inout SignificantTimeChange) -> [String] {
        var parts: [String] = []
        let newOffset = clock.utcOffset(at: now)
        if newOffset != offset {
            causes.insert(.daylightSaving)
            parts.append("the offset from UTC is now \(Self.describe(offset: newOffset))")
        }
        offset = newOffset
        let newDay = Self.day(of: now, offset: newOffset)
        if newDay != day {
            causes.insert(.midnight)
            parts.append("the local day changed")
        }
        day = newDay
        return parts
    }

    static func seconds(_ nanoseconds: Int64) -> Int64 {
        nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds - 999_999_999) / 1_000_000_000
    }

    static func day(of seconds: Int64, offset: Int64) -> Int64 {
        let local = seconds + offset
        return local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
    }

    /// `3h 12m forward`, `40s back`.
    static func describe(_ moved: Int64) -> String {
        let total = abs(moved) / 1_000_000_000
        let (days, hours, minutes, seconds) = (total / 86_400, total % 86_400 / 3600, total % 3600 / 60, total % 60)
        var parts: [String] = []
        if days > 0 { parts.append("\(days)d") }
        if hours > 0 { parts.append("\(hours)h") }
        if minutes > 0 { parts.append("\(minutes)m") }
        if seconds > 0 || parts.isEmpty { parts.append("\(seconds)s") }
        return parts.joined(separator: " ") + (moved > 0 ? " forward" : " back")
    }

    /// `+01:00`.
    static func describe(offset: Int64) -> String {
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        let (hours, rest) = (minutes / 60, minutes % 60)
        return sign + (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
    }
}

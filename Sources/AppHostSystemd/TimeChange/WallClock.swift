import CAppHostShims
import Glibc

/// What the time-change source reads of the machine's time: the wall clock against the boot
/// clock, and the local zone. The daemon's is `SystemWallClock`; tests give one they move
/// (nothing here or in a test sets the machine's clock).
package protocol WallClock: Sendable {
    /// `CLOCK_REALTIME` and `CLOCK_BOOTTIME` now, in nanoseconds. Their difference moves only
    /// when the wall clock is set: both go on through a suspend.
    func now() -> (realtime: Int64, boottime: Int64)
    /// The local zone's offset from UTC, in seconds, at `seconds` since 1970.
    func utcOffset(at seconds: Int64) -> Int64
    /// Reads the zone again (after `/etc/localtime` changed) and names it: `Europe/Berlin`, or
    /// nil when it has no name.
    func reloadZone() -> String?
}

/// The machine's clocks and its zone from `/etc/localtime` (glibc's `tzset`), or `$TZ` when set.
package struct SystemWallClock: WallClock {
    package init() {}

    package func now() -> (realtime: Int64, boottime: Int64) {
        (Self.read(CLOCK_REALTIME), Self.read(CLOCK_BOOTTIME))
    }

    package func utcOffset(at seconds: Int64) -> Int64 {
        var time = time_t(seconds)
        var local = tm()
        guard localtime_r(&time, &local) != nil else { return 0 }
        return Int64(local.tm_gmtoff)
    }

    package func reloadZone() -> String? {
        tzset()
        return Self.zoneName()
    }

    /// The zone `/etc/localtime` names (the part of its link after `zoneinfo/`), `$TZ` when set,
    /// or, when the file is no link, its abbreviations (`CET/CEST`: the same the year round).
    package static func zoneName() -> String? {
        if let tz = getenv("TZ") { return String(cString: tz) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { readlink("/etc/localtime", $0.baseAddress!, $0.count - 1) }
        if count > 0 {
            let target = Array(buffer[..<count])
            let marker = Array("zoneinfo/".utf8)
            var start = 0
            for index in stride(from: target.count - marker.count, through: 0, by: -1) where Array(target[index..<index + marker.count]) == marker {
                start = index + marker.count
                break
            }
            return String(decoding: target[start...], as: UTF8.self)
        }
        guard let standard = apphost_tzname(0) else { return nil }
        let daylight = apphost_tzname(1).map { String(cString: $0) } ?? ""
        return String(cString: standard) + (daylight.isEmpty || daylight == String(cString: standard) ? "" : "/" + daylight)
    }

    private static func read(_ clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

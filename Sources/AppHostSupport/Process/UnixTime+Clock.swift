import AppHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension UnixTime {
    /// The wall clock now (`CLOCK_REALTIME`).
    package static var now: UnixTime {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UnixTime(secondsSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
    }
}

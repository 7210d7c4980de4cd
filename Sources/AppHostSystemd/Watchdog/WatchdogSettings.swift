import AppHostSupport
import CSystemd
import Glibc
import SystemPackage

/// The service watchdog systemd asks for (`WatchdogSec=` → `$WATCHDOG_USEC`, `$WATCHDOG_PID`).
///
/// nil means no watchdog: then the host runs no ping timer at all and an idle daemon never wakes.
public struct WatchdogSettings: Sendable, Equatable {
    /// How long systemd waits for a ping before it restarts the service.
    public let timeout: Duration

    /// The shortest ping interval: a ping goes through the host's loop, and pinging thousands of
    /// times a second (`WATCHDOG_USEC=1`) would only burn a core.
    public static let minimumPingInterval = Duration.milliseconds(100)

    /// Ping at half the timeout, as sd_watchdog_enabled(3) recommends, but not more often than
    /// every `minimumPingInterval`.
    public var pingInterval: Duration { max(timeout / 2, Self.minimumPingInterval) }

    /// True when the timeout is too short to honour: below twice `minimumPingInterval`, the
    /// pings come too seldom for it and systemd will restart the service.
    public var isBelowFloor: Bool { timeout / 2 < Self.minimumPingInterval }

    /// How the daemon describes it at start.
    public var summary: String {
        isBelowFloor
            ? "WATCHDOG_USEC=\(timeout.wholeMicroseconds) is below the \((Self.minimumPingInterval * 2).configText) floor: pinging every \(pingInterval.configText); raise WatchdogSec="
            : "ping every \(pingInterval.configText)"
    }

    /// A watchdog with this timeout (for tests and embedding).
    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// The process's watchdog, from `sd_watchdog_enabled` (`$WATCHDOG_USEC`, and `$WATCHDOG_PID`
    /// if set must be this process): nil when there is none.
    /// - Throws: `Errno.invalidArgument` when the variables are set but not numbers libsystemd
    ///   reads; the daemon then runs without pings and says so.
    public static func fromEnvironment() throws(Errno) -> WatchdogSettings? {
        var microseconds: UInt64 = 0
        let result = sd_watchdog_enabled(0, &microseconds)
        if result < 0 { throw Errno(rawValue: -result) }
        guard result > 0, microseconds > 0, microseconds <= UInt64(Int64.max) else { return nil }
        return WatchdogSettings(timeout: .microseconds(Int64(microseconds)))
    }
}

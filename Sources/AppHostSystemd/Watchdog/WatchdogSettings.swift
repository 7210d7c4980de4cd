import Glibc

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

    /// Reads `$WATCHDOG_USEC` and `$WATCHDOG_PID` like `sd_watchdog_enabled`: nil when the timeout
    /// is unset, not a positive integer, or `$WATCHDOG_PID` is set and names another process
    /// (or is not a pid).
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessEnvironment.current,
        pid: Int32 = getpid()
    ) -> WatchdogSettings? {
        guard let text = environment["WATCHDOG_USEC"],
              let microseconds = UInt64(text.trimmingSpaces),
              microseconds > 0, microseconds <= UInt64(Int64.max)
        else { return nil }
        if let pidText = environment["WATCHDOG_PID"], !pidText.isEmpty {
            guard let watchdogPID = Int32(pidText.trimmingSpaces),
                  watchdogPID == pid
            else { return nil }
        }
        return WatchdogSettings(timeout: .microseconds(Int64(microseconds)))
    }
}

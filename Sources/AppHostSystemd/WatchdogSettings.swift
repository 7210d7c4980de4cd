import Foundation
import Glibc

/// The service watchdog systemd asks for (`WatchdogSec=` → `$WATCHDOG_USEC`, `$WATCHDOG_PID`).
///
/// nil means no watchdog: then the host runs no ping timer at all and an idle daemon never wakes.
public struct WatchdogSettings: Sendable, Equatable {
    /// How long systemd waits for a ping before it restarts the service.
    public let timeout: Duration

    /// Ping at half the timeout, as sd_watchdog_enabled(3) recommends.
    public var pingInterval: Duration { timeout / 2 }

    /// A watchdog with this timeout (for tests and embedding).
    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Reads `$WATCHDOG_USEC` and `$WATCHDOG_PID` like `sd_watchdog_enabled`: nil when the timeout
    /// is unset, not a positive integer, or `$WATCHDOG_PID` is set and names another process
    /// (or is not a pid).
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
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

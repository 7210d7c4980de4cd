import AppHostSystemd
import Glibc
import Testing

/// `WatchdogSettings.fromEnvironment()` is `sd_watchdog_enabled`, which reads the process's
/// environment: the probe is run with each one.
@Suite struct WatchdogSettingsTests {
    private func watchdog(_ environment: [String: String], pidIsMine: Bool = false) throws -> String? {
        try SystemdProbe.lines(["watchdog"], environment: environment, shell: pidIsMine ? #"WATCHDOG_PID=$$ exec "$@""# : nil).first
    }

    @Test func offWhenUnset() throws {
        #expect(try watchdog([:]) == "none")
    }

    @Test("a value libsystemd cannot read is an error the daemon reports, not a silent off")
    func garbageIsAnError() throws {
        for value in ["", "0", "abc", "-5", "12s"] {
            #expect(try watchdog(["WATCHDOG_USEC": value])?.hasPrefix("error: ") == true, "WATCHDOG_USEC=\(value)")
        }
        #expect(try watchdog(["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "x"])?.hasPrefix("error: ") == true)
    }

    @Test func offWhenAnotherProcessIsWatched() throws {
        #expect(try watchdog(["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"]) == "none")
    }

    @Test func onForUs() throws {
        #expect(try watchdog(["WATCHDOG_USEC": "3000000"], pidIsMine: true) == "timeout-us=3000000 interval-us=1500000 below-floor=false")
        #expect(try watchdog(["WATCHDOG_USEC": "250000"]) == "timeout-us=250000 interval-us=125000 below-floor=false")
    }

    @Test("an interval too short to honour is clamped to the floor and reported")
    func tooShortIsClampedAndReported() throws {
        #expect(try watchdog(["WATCHDOG_USEC": "1"]) == "timeout-us=1 interval-us=100000 below-floor=true")
        let tiny = WatchdogSettings(timeout: .microseconds(1))
        #expect(tiny.pingInterval == WatchdogSettings.minimumPingInterval)
        #expect(tiny.summary.contains("below the 200ms floor"))
        let fine = WatchdogSettings(timeout: .milliseconds(200))
        #expect(fine.pingInterval == .milliseconds(100))
        #expect(!fine.isBelowFloor)
    }
}

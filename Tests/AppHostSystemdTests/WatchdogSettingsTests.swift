import AppHostSystemd
import Glibc
import Testing

@Suite struct WatchdogSettingsTests {
    @Test func offWhenUnsetZeroOrGarbage() {
        #expect(WatchdogSettings.fromEnvironment([:], pid: 100) == nil)
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "0"], pid: 100) == nil)
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": ""], pid: 100) == nil)
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "abc"], pid: 100) == nil)
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "-5"], pid: 100) == nil)
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "12s"], pid: 100) == nil)
    }

    @Test func offWhenAnotherProcessIsWatched() {
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "101"], pid: 100) == nil)
        #expect(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "x"], pid: 100) == nil)
    }

    @Test func onForUs() {
        let mine = WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": "100"], pid: 100)
        #expect(mine == WatchdogSettings(timeout: .seconds(3)))
        #expect(mine?.pingInterval == .milliseconds(1500))
        let unnamed = WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "250000"], pid: 100)
        #expect(unnamed?.timeout == .milliseconds(250))
        #expect(unnamed?.pingInterval == .milliseconds(125))
        let defaults = WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "20000000", "WATCHDOG_PID": "\(getpid())"])
        #expect(defaults?.timeout == .seconds(20))
    }

    @Test("an interval too short to honour is clamped to the floor and reported")
    func tooShortIsClampedAndReported() throws {
        let tiny = try #require(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "1"], pid: 100))
        #expect(tiny.pingInterval == WatchdogSettings.minimumPingInterval)
        #expect(tiny.isBelowFloor)
        #expect(tiny.summary.contains("below the 200ms floor"))
        let fine = try #require(WatchdogSettings.fromEnvironment(["WATCHDOG_USEC": "200000"], pid: 100))
        #expect(fine.pingInterval == .milliseconds(100))
        #expect(!fine.isBelowFloor)
    }
}

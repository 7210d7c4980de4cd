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
}

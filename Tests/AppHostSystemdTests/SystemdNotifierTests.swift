@testable import AppHostSystemd
import Foundation
import Glibc
import Testing

@Suite struct SystemdNotifierTests {
    private func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    @Test func isANoOpWithoutNotifySocket() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(!notifier.send([("READY", "1")]))
        notifier.ready(status: "active")  // must not crash or block
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": ""]).isEnabled)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/path"]).isEnabled)
    }

    @Test func sendsTheProtocolToAPathSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(notifier.isEnabled)
        #expect(notifier.address == NotifySocketAddress(receiver.notifySocket))

        notifier.ready(status: "active · 4 services")
        #expect(receiver.receive() == "READY=1\nSTATUS=active · 4 services")
        notifier.status("background")
        #expect(receiver.receive() == "STATUS=background")
        notifier.stopping(status: "terminating")
        #expect(receiver.receive() == "STOPPING=1\nSTATUS=terminating")
        notifier.extendTimeout(by: .seconds(5))
        #expect(receiver.receive() == "EXTEND_TIMEOUT_USEC=5000000")
        notifier.extendTimeout(by: .milliseconds(1500))
        #expect(receiver.receive() == "EXTEND_TIMEOUT_USEC=1500000")
        notifier.launchFailed(status: "launch failed: analytics failed willFinishLaunching: boom", errno: 5)
        #expect(receiver.receive() == "STATUS=launch failed: analytics failed willFinishLaunching: boom\nERRNO=5")
        notifier.watchdogPing()
        #expect(receiver.receive() == "WATCHDOG=1")
        #expect(notifier.send(["A": "1", "B": "two\nlines"]))
        #expect(receiver.receive() == "A=1\nB=two lines")
        #expect(!receiver.hasPending)
    }

    @Test func lineBreaksInValuesBecomeSpaces() {
        #expect(SystemdNotifier.singleLine("active · 4 services") == "active · 4 services")
        #expect(SystemdNotifier.singleLine("a\nb\r\nc\n") == "a b c ")
        #expect(SystemdNotifier.singleLine("carriage\ronly") == "carriage\ronly")
        #expect(SystemdNotifier.datagram([("STATUS", "bad\nconfig"), ("ERRNO", "22")]) == "STATUS=bad config\nERRNO=22")
    }

    @Test func reloadingCarriesCLOCKMONOTONIC() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        let before = monotonicNow()
        notifier.reloading(status: "reloading")
        let after = monotonicNow()
        let lines = try #require(receiver.receive()).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first == "RELOADING=1")
        #expect(lines.last == "STATUS=reloading")
        let stamp = try #require(lines.first { $0.hasPrefix("MONOTONIC_USEC=") }?.dropFirst("MONOTONIC_USEC=".count))
        let microseconds = try #require(UInt64(stamp))
        #expect(microseconds >= before && microseconds <= after)
    }

    @Test func sendsToAnAbstractSocket() throws {
        let name = "@apphost-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try DatagramReceiver(name)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": name])
        #expect(notifier.isEnabled)
        notifier.ready(status: "active")
        #expect(receiver.receive() == "READY=1\nSTATUS=active")
    }

    @Test func aMissingSocketIsReportedNotFatal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": directory.file("nobody")])
        #expect(notifier.isEnabled)
        #expect(!notifier.send([("READY", "1")]))
    }
}

@testable import AppHostSystemd
import AppHostTestSupport
import Foundation
import Glibc
import Testing

/// `SystemdNotifier` is `sd_notify`, which reads the process's `$NOTIFY_SOCKET`: each test runs
/// the probe with a socket of its own.
@Suite struct SystemdNotifierTests {
    private func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    @Test func isANoOpWithoutNotifySocket() throws {
        #expect(try SystemdProbe.lines(["notify", "ready:active", "send:READY=1"]) == ["disabled", "done", "not sent"])
        #expect(try SystemdProbe.lines(["notify", "send:READY=1"], environment: ["NOTIFY_SOCKET": ""]) == ["disabled", "not sent"])
        // libsystemd refuses what is neither a path nor an abstract name.
        #expect(try SystemdProbe.lines(["notify", "send:READY=1"], environment: ["NOTIFY_SOCKET": "relative/path"]) == ["enabled", "not sent"])
    }

    @Test func sendsTheProtocolToAPathSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let steps = [
            "ready:active · 4 services", "status:background", "stopping:terminating", "extend-ms:5000", "extend-ms:1500",
            "launch-failed:5:launch failed: analytics failed willFinishLaunching: boom", "ping",
            "trigger:unhealthy", "send:A=1|B=two\nlines",
        ]
        let printed = try SystemdProbe.lines(["notify"] + steps, environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(printed == ["enabled"] + Array(repeating: "done", count: steps.count - 1) + ["sent"])
        #expect(receiver.receive() == "READY=1\nSTATUS=active · 4 services")
        #expect(receiver.receive() == "STATUS=background")
        #expect(receiver.receive() == "STOPPING=1\nSTATUS=terminating")
        #expect(receiver.receive() == "EXTEND_TIMEOUT_USEC=5000000")
        #expect(receiver.receive() == "EXTEND_TIMEOUT_USEC=1500000")
        #expect(receiver.receive() == "STATUS=launch failed: analytics failed willFinishLaunching: boom\nERRNO=5")
        #expect(receiver.receive() == "WATCHDOG=1")
        #expect(receiver.receive() == "STATUS=unhealthy\nWATCHDOG=trigger")
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
        let before = monotonicNow()
        _ = try SystemdProbe.lines(["notify", "reloading:reloading"], environment: ["NOTIFY_SOCKET": receiver.notifySocket])
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
        #expect(try SystemdProbe.lines(["notify", "send:READY=1|STATUS=active"], environment: ["NOTIFY_SOCKET": name]) == ["enabled", "sent"])
        #expect(receiver.receive() == "READY=1\nSTATUS=active")
    }

    @Test func aMissingSocketIsReportedNotFatal() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(try SystemdProbe.lines(["notify", "send:READY=1"], environment: ["NOTIFY_SOCKET": directory.file("nobody")]) == ["enabled", "not sent"])
    }
}

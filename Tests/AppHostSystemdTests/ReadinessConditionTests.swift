import AppHostTestSupport
import Foundation
import Testing

/// An embedding program's readiness: the launch's `READY=1` waits for its conditions. The host
/// and its `SystemdNotifyEdge` run in the probe (sd_notify reads the process's
/// `$NOTIFY_SOCKET`), driven from here.
@Suite struct ReadinessConditionTests {
    /// The next datagram, read on a thread of its own so no test pool thread blocks in recv.
    static func datagram(_ receiver: DatagramReceiver) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread { continuation.resume(returning: receiver.receive()) }.start()
        }
    }

    /// Datagrams up to and including the first that contains `text`.
    static func datagrams(_ receiver: DatagramReceiver, through text: String) async -> [String] {
        var seen: [String] = []
        while let next = await datagram(receiver) {
            seen.append(next)
            if next.contains(text) { break }
        }
        return seen
    }

    @Test("READY=1 waits for every condition; meanwhile STATUS= names what it waits for")
    func readyWaitsForTheProgramsConditions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let probe = try SystemdProbe(["host", "--waiting-for", "http", "--waiting-for", "database"], environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(await probe.nextLine() == "launched")

        let before = await Self.datagrams(receiver, through: "waiting for")
        #expect(before.last == "STATUS=active · 1 service · waiting for http, database", "\(before)")
        #expect(!before.contains { $0.contains("READY=1") }, "\(before)")

        try await probe.send("mark http")
        #expect(await Self.datagram(receiver) == "STATUS=active · 1 service · waiting for database")
        // A request while held: its status still names the wait.
        #expect(try await probe.send("background") == ["changed=true"])
        #expect(await Self.datagram(receiver) == "STATUS=background · 1 service · waiting for database")
        try await probe.send("mark database")
        #expect(await Self.datagram(receiver) == "READY=1\nSTATUS=background · 1 service")
        try await probe.send("mark database")
        #expect(try await probe.send("foreground") == ["changed=true"])
        #expect(await Self.datagram(receiver) == "STATUS=active · 1 service")

        try await probe.send("terminate")
        #expect(probe.finish() == 0)
    }

    @Test("a condition marked ready before the launch ends holds nothing back")
    func aConditionReadyEarlyHoldsNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let probe = try SystemdProbe(["host", "--service", "none", "--ready-early", "early"], environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(await probe.nextLine() == "launched")
        let seen = await Self.datagrams(receiver, through: "READY=1")
        #expect(seen.last == "READY=1\nSTATUS=active · 0 services", "\(seen)")
        #expect(!seen.contains { $0.contains("waiting for") })
        try await probe.send("terminate")
        #expect(probe.finish() == 0)
    }
}

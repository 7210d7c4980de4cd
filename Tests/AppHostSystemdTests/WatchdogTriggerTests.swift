import AppHostTestSupport
import Foundation
import Testing

/// `WATCHDOG=trigger`: the notify service sends it with the status that says the host is
/// unhealthy. The host runs in the probe (sd_notify reads the process's `$NOTIFY_SOCKET`).
@Suite struct WatchdogTriggerTests {
    func statuses(triggersWatchdog: Bool) async throws -> [String] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let options = ["--service", "hang", "--hook-deadline-ms", "50", "--terminate-deadline-ms", "100", "--stall-limit-ms", "300"]
        let probe = try SystemdProbe(["host"] + options + (triggersWatchdog ? ["--watchdog"] : []), environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(await probe.nextLine() == "launched")
        try await probe.send("background")
        let seen = await ReadinessConditionTests.datagrams(receiver, through: "unhealthy")
        try await probe.send("terminate")
        #expect(probe.finish() == 0)
        return seen
    }

    @Test("with a watchdog, the status naming the stuck required service goes out with WATCHDOG=trigger")
    func triggersWithTheUnhealthyStatus() async throws {
        let seen = try await statuses(triggersWatchdog: true)
        #expect(seen.last == "STATUS=background · 1 service · hang overran applicationDidEnterBackground (50ms) · unhealthy: hang stuck in applicationDidEnterBackground for more than 300ms\nWATCHDOG=trigger", "\(seen)")
        #expect(seen.dropLast().allSatisfy { !$0.contains("WATCHDOG") }, "\(seen)")
    }

    @Test("without a watchdog the same status only reports it")
    func onlyReportsWithoutAWatchdog() async throws {
        let seen = try await statuses(triggersWatchdog: false)
        #expect(seen.last == "STATUS=background · 1 service · hang overran applicationDidEnterBackground (50ms) · unhealthy: hang stuck in applicationDidEnterBackground for more than 300ms", "\(seen)")
        #expect(!seen.contains { $0.contains("WATCHDOG") }, "\(seen)")
    }

    @Test("a host that turns unhealthy as a reload ends: its READY=1 carries WATCHDOG=trigger")
    func triggersWithTheReloadsReady() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try DatagramReceiver(directory.file("notify"))
        let probe = try SystemdProbe(["host", "--service", "fails-on-update", "--watchdog"], environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        #expect(await probe.nextLine() == "launched")
        #expect(await ReadinessConditionTests.datagrams(receiver, through: "READY=1").last == "READY=1\nSTATUS=active · 1 service")
        try await probe.send("reload 2s")
        let seen = await ReadinessConditionTests.datagrams(receiver, through: "READY=1")
        #expect(seen.last == "READY=1\nSTATUS=active · 1 service · unhealthy: db reports: database gone\nWATCHDOG=trigger", "\(seen)")
        try await probe.send("terminate")
        #expect(probe.finish() == 0)
    }
}

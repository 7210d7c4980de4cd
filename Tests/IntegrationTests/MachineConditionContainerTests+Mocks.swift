import AppHostTestSupport
import Foundation
import Testing

// UPower and NetworkManager need hardware (a power supply, network devices), so
// python3-dbusmock's templates stand in for them on the container's real system bus, which
// lets no one own a name without a policy: the test installs one for the two mocked names.
extension IntegrationSuites.MachineConditionContainerTests {
    static let mockPolicy = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <policy user="root">
            <allow own="org.freedesktop.UPower"/>
            <allow own="org.freedesktop.NetworkManager"/>
          </policy>
          <policy context="default">
            <allow send_destination="org.freedesktop.UPower"/>
            <allow send_destination="org.freedesktop.NetworkManager"/>
          </policy>
        </busconfig>

        """

    /// A template's mock as a transient unit that is started once it owns `name`.
    static func startMock(_ system: SystemManager, template: String, name: String, parameters: String? = nil) async throws {
        var command = ["systemd-run", "--unit=apphost-mock-\(template)", "-p", "Type=dbus", "-p", "BusName=\(name)", "/usr/bin/python3", "-m", "dbusmock", "--system", "--template", template]
        if let parameters { command += ["-p", parameters] }
        let started = try await system.run(command, timeout: .seconds(60))
        let log = started.succeeded ? "" : await system.journalText(unit: "apphost-mock-\(template)")
        try #require(started.succeeded, "\(started)\n\(log)")
    }

    static func setProperty(_ system: SystemManager, _ name: String, _ path: String, _ interface: String, _ property: String, _ type: String, _ value: String) async throws {
        let set = try await system.run(["busctl", "set-property", name, path, interface, property, type, value])
        try #require(set.succeeded, "\(property) = \(value): \(set)")
    }

    /// 1,000 changes of NetworkManager's `State` as fast as the bus takes them, between
    /// connected-global and disconnected, then `Metered` no: the one value the flaps never had.
    static let flaps = """
        import dbus
        props = dbus.Interface(dbus.SystemBus().get_object('org.freedesktop.NetworkManager', '/org/freedesktop/NetworkManager'), 'org.freedesktop.DBus.Properties')
        for i in range(1000):
            props.Set('org.freedesktop.NetworkManager', 'State', dbus.UInt32(20 if i % 2 == 0 else 70))
        props.Set('org.freedesktop.NetworkManager', 'Metered', dbus.UInt32(2))
        """

    // Fails on a daemon that ignores UPower's display device, reads ASLEEP or a local
    // connection as online, misses Metered, or tells every flap.
    @Test("UPower and NetworkManager from dbusmock: a battery going low, then critical; connected-local and metered is offline and expensive; 1,000 flaps give far fewer calls, the last value, and apphostd status answers throughout")
    func mockedUPowerAndNetworkManager() async throws {
        let system = try Self.Support.system()
        try system.write(Self.mockPolicy, to: "/etc/dbus-1/system.d/apphost-test-mocks.conf")
        let reload = try await system.run(["busctl", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ReloadConfig"])
        try #require(reload.succeeded, "\(reload)")
        // A real UPower, should the root have one, would hold the name.
        _ = try await system.run(["sh", "-c", "systemctl stop upower.service; systemctl mask --runtime upower.service"])
        try await Self.Support.withAFifthService(system, replacing: ["  network: auto": "  network: networkmanager"], entry: Self.watcher) {
            let cursor = try await system.journalCursor()
            try await Self.startMock(system, template: "upower", name: "org.freedesktop.UPower")
            let display = "/org/freedesktop/UPower/devices/DisplayDevice"
            try await Self.setProperty(system, "org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.UPower", "OnBattery", "b", "true")
            try await Self.waitForDaemon(system, "on battery", after: cursor, Self.exec(saying: "battery=1"))
            try await Self.setProperty(system, "org.freedesktop.UPower", display, "org.freedesktop.UPower.Device", "WarningLevel", "u", "3")
            try await Self.waitForDaemon(system, "the battery low", after: cursor, Self.message("the power state is on battery, battery low"))
            try await Self.setProperty(system, "org.freedesktop.UPower", display, "org.freedesktop.UPower.Device", "WarningLevel", "u", "4")
            let power = try await Self.waitForDaemon(system, "the battery critical", after: cursor, Self.message("the power state is on battery, battery critical"))
            let audit = power.filter { $0["EVENT"] == "powerStateDidChange" && $0["MESSAGE"]?.hasPrefix("powerStateDidChange: ") == true }
            #expect(audit.map { $0["POWER"] ?? "" }.suffix(3) == ["on battery", "on battery, battery low", "on battery, battery critical"], "the logger's records: \(audit.map(SystemManager.line))")
            let report = try await Self.status(system)
            #expect(report.succeeded && report.stdout.contains("  Power:   on battery, battery critical\n"), "\(report)")

            let network = try await system.journalCursor()
            try await Self.startMock(system, template: "networkmanager", name: "org.freedesktop.NetworkManager")
            try await Self.waitForDaemon(system, "NetworkManager's connected-global", after: network, Self.exec(saying: "network=available expensive=0"))
            // The template has no Metered: added first (no signal), then set (PropertiesChanged).
            let added = try await system.run(["busctl", "call", "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock", "AddProperty", "ssv", "org.freedesktop.NetworkManager", "Metered", "u", "4"])
            try #require(added.succeeded, "\(added)")
            let nm = ("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager")
            try await Self.setProperty(system, nm.0, nm.1, nm.2, "Metered", "u", "1")
            try await Self.waitForDaemon(system, "metered", after: network, Self.exec(saying: "network=available expensive=1"))
            try await Self.setProperty(system, nm.0, nm.1, nm.2, "State", "u", "50")
            try await Support.waitForStatus(system, "offline") { $0["StatusText"]?.contains(" · offline") == true }
            try await Self.waitForDaemon(system, "connected-local", after: network, Self.exec(saying: "network=unavailable expensive=1"))
            // Asleep (every suspend) changes nothing; connected-global again is available.
            try await Self.setProperty(system, nm.0, nm.1, nm.2, "State", "u", "10")
            try await Self.setProperty(system, nm.0, nm.1, nm.2, "State", "u", "70")
            let back = try await Self.waitForDaemon(system, "connected-global again", after: network, Self.exec(saying: "network=available expensive=1"))
            #expect(back.filter(Self.exec(saying: "network=")).count == 4, "available, metered, local, global: \(back.map(SystemManager.line).suffix(30))")

            try await Self.flapStorm(system)
        }
        _ = try await system.run(["systemctl", "stop", "apphost-mock-upower", "apphost-mock-networkmanager"])
    }

    /// The 1,000 flaps, with `apphostd status` asked over and over while they run.
    static func flapStorm(_ system: SystemManager) async throws {
        let pid = try await system.show(Support.unit, ["MainPID"])["MainPID"] ?? "0"
        let before = try await rss(system, pid: pid)
        let cursor = try await system.journalCursor()
        let done = Flag()
        let (storm, answers) = try await withThrowingTaskGroup(of: (CommandResult?, [CommandResult]).self) { group in
            group.addTask {
                defer { done.set() }
                return (try await system.run(["/usr/bin/python3", "-c", Self.flaps], timeout: .seconds(120)), [])
            }
            group.addTask {
                var answers: [CommandResult] = []
                while !done.isSet { answers.append(try await Self.status(system)) }
                return (nil, answers)
            }
            var storm: CommandResult?
            var answers: [CommandResult] = []
            for try await (result, asked) in group {
                storm = storm ?? result
                answers += asked
            }
            return (storm, answers)
        }
        try #require(storm?.succeeded == true, "\(storm.map { "\($0)" } ?? "")")
        #expect(!answers.isEmpty && answers.allSatisfy(\.succeeded), "apphostd status during the flaps: \(answers.filter { !$0.succeeded })")
        let records = try await Self.waitForDaemon(system, "the last value", after: cursor, timeout: .seconds(60), Self.exec(saying: "network=available expensive=0"))
        let calls = records.filter { $0["EVENT"] == "networkDidChange" && $0["MESSAGE"]?.hasPrefix("networkDidChange: ") == true }
        #expect(calls.count < 500, "\(calls.count) calls for 1,000 flaps")
        #expect(calls.last?["NETWORK"] == "available", "\(calls.suffix(3).map(SystemManager.line))")
        let after = try await rss(system, pid: pid)
        // A bound that never flakes: the benchmarks measure growth; this catches a queue of 1,000.
        #expect(after - before < 16 * 1024, "RSS \(before) KiB before the flaps, \(after) KiB after")
        print("flaps: \(calls.count) calls for 1,000 changes, \(answers.count) status answers, RSS \(before) → \(after) KiB")
    }

    /// The daemon's resident memory in KiB.
    static func rss(_ system: SystemManager, pid: String) async throws -> Int {
        let status = try await system.run(["cat", "/proc/\(pid)/status"])
        let line = status.stdout.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        guard let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }) else {
            throw HarnessError("no VmRSS for \(pid): \(status)")
        }
        return kib
    }
}

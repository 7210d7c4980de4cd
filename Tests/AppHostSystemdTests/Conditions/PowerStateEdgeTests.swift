import AppHost
import AppHostTestKit
import DBusTestSupport
import Logging
import Testing

@testable import AppHostSystemd

/// The power state's edge against stand-ins of power-profiles-daemon (both of its names) and
/// UPower on a private bus. The real power-profiles-daemon is the PID-1 suites'.
@Suite struct PowerStateEdgeTests {
    static let profiles = "/org/freedesktop/UPower/PowerProfiles"
    static let hadess = "/net/hadess/PowerProfiles"

    func withEdge(bus: TestSessionBus, logs: CapturedLogs = CapturedLogs(), _ body: (ConditionWitness) async throws -> Void) async throws {
        try await withConditionEdge(loopName: "test-power", { host, loop in
            PowerStateEdge(host: host, logger: logs.logger(), on: loop, bus: .address(bus.address))
        }, body)
    }

    @Test("power-profiles-daemon 0.12's name: power-saver is low power mode, balanced is not, each a request with cause power")
    func lowPowerModeFromTheOldName() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let daemon = try await TestPropertyServer.start(
            address: bus.address, name: "net.hadess.PowerProfiles",
            objects: [.init(path: Self.hadess, interface: "net.hadess.PowerProfiles", properties: ["ActiveProfile": .string("balanced")])]
        )
        let logs = CapturedLogs()
        try await withEdge(bus: bus, logs: logs) { witness in
            #expect(await logs.first { $0.message == "following the power state from power-profiles-daemon (net.hadess.PowerProfiles)" } != nil)
            daemon.set("ActiveProfile", at: Self.hadess, to: .string("power-saver"))
            #expect(await witness.told.first { _ in true } == "power low power; power")
            daemon.set("ActiveProfile", at: Self.hadess, to: .string("balanced"))
            #expect(await witness.told.first(from: 1) { _ in true } == "power normal; power")
        }
        await daemon.stop()
    }

    @Test("both names: the new one is read; when it goes, the old one's")
    func theNewNameFirst() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let new = try await TestPropertyServer.start(
            address: bus.address, name: "org.freedesktop.UPower.PowerProfiles",
            objects: [.init(path: Self.profiles, interface: "org.freedesktop.UPower.PowerProfiles", properties: ["ActiveProfile": .string("power-saver")])]
        )
        let old = try await TestPropertyServer.start(
            address: bus.address, name: "net.hadess.PowerProfiles",
            objects: [.init(path: Self.hadess, interface: "net.hadess.PowerProfiles", properties: ["ActiveProfile": .string("performance")])]
        )
        try await withEdge(bus: bus) { witness in
            #expect(await witness.told.first { _ in true } == "power low power; power")
            await new.leave()
            #expect(await witness.told.first(from: 1) { _ in true } == "power normal; power")
        }
        await new.stop()
        await old.stop()
    }

    @Test("UPower: on battery, and the display device's warning level going low, then critical")
    func theBattery() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let display = "/org/freedesktop/UPower/devices/DisplayDevice"
        let upower = try await TestPropertyServer.start(
            address: bus.address, name: "org.freedesktop.UPower",
            objects: [
                .init(path: "/org/freedesktop/UPower", interface: "org.freedesktop.UPower", properties: ["OnBattery": .bool(false)]),
                .init(path: display, interface: "org.freedesktop.UPower.Device", properties: ["WarningLevel": .uint32(1)]),
            ]
        )
        try await withEdge(bus: bus) { witness in
            #expect(await witness.told.first { _ in true } == "power normal; power", "warning level none: known now")
            upower.set("OnBattery", at: "/org/freedesktop/UPower", to: .bool(true))
            #expect(await witness.told.first(from: 1) { _ in true } == "power on battery; power")
            upower.set("WarningLevel", at: display, to: .uint32(3))
            #expect(await witness.told.first(from: 2) { _ in true } == "power on battery, battery low; power")
            upower.set("WarningLevel", at: display, to: .uint32(4))
            #expect(await witness.told.first(from: 3) { _ in true } == "power on battery, battery critical; power")
        }
        await upower.stop()
    }
}

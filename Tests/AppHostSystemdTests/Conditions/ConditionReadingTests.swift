import AppHost
import Testing

@testable import AppHostSystemd

/// What each source's properties mean, without a bus.
@Suite struct ConditionReadingTests {
    @Test("networkd: routable only is available; it knows nothing of metering", arguments: [
        ("routable", NetworkPath.Status.available), ("degraded", .unavailable), ("carrier", .unavailable), ("no-carrier", .unavailable), ("off", .unavailable),
    ])
    func networkd(state: String, status: NetworkPath.Status) {
        #expect(NetworkPathSource.networkd(["OperationalState": .string(state)]).value == NetworkPath(status: status))
    }

    @Test("NetworkManager: connected-global with full or unknown connectivity is available; 0 unknown; asleep keeps the path; metered yes and guess-yes are expensive", arguments: [
        (UInt32(70), UInt32(4), UInt32(2), NetworkPath(status: .available)),
        (70, 0, 4, NetworkPath(status: .available)),
        (70, 3, 2, NetworkPath(status: .unavailable)),
        (60, 4, 2, NetworkPath(status: .unavailable)),
        (20, 1, 2, NetworkPath(status: .unavailable)),
        (0, 0, 0, NetworkPath(status: .unknown)),
        (10, 1, 1, NetworkPath(status: .available, isExpensive: true)),
        (70, 4, 1, NetworkPath(status: .available, isExpensive: true)),
        (70, 4, 3, NetworkPath(status: .available, isExpensive: true)),
    ])
    func networkManager(state: UInt32, connectivity: UInt32, metered: UInt32, expected: NetworkPath) {
        let previous = NetworkPath(status: .available, isExpensive: true)
        let reading = NetworkPathSource.networkManager(["State": .uint32(state), "Connectivity": .uint32(connectivity), "Metered": .uint32(metered)], previous: previous)
        #expect(reading.value == expected)
    }

    @Test("auto: NetworkManager's word while it is there, else networkd's, else unknown with no source")
    func automatic() {
        let manager: [String: BusPropertyWatch.Value] = ["State": .uint32(20)]
        let networkd: [String: BusPropertyWatch.Value] = ["OperationalState": .string("routable")]
        #expect(NetworkPathSource.automatic.reading(previous: .unknown, [manager, networkd]).value.status == .unavailable)
        #expect(NetworkPathSource.automatic.reading(previous: .unknown, [nil, networkd]).value.status == .available)
        let none = NetworkPathSource.automatic.reading(previous: NetworkPath(status: .available), [nil, nil])
        #expect(none.value == .unknown && none.source == nil)
    }

    @Test("UPower's WarningLevel: all six values, and anything else unknown", arguments: [
        (UInt32(0), PowerState.BatteryWarningLevel.unknown), (1, .none), (2, .discharging), (3, .low), (4, .critical), (5, .action), (9, .unknown),
    ])
    func warningLevels(level: UInt32, expected: PowerState.BatteryWarningLevel) {
        #expect(PowerStateSource.reading([nil, nil, nil, ["WarningLevel": .uint32(level)]]).value.batteryWarningLevel == expected)
    }

    @Test("power-saver from either name is low power mode, the new name first; no source is unknown")
    func profiles() {
        let saver: [String: BusPropertyWatch.Value] = ["ActiveProfile": .string("power-saver")]
        let balanced: [String: BusPropertyWatch.Value] = ["ActiveProfile": .string("balanced")]
        #expect(PowerStateSource.reading([nil, saver, nil, nil]).value.isLowPowerModeEnabled)
        #expect(!PowerStateSource.reading([balanced, saver, nil, nil]).value.isLowPowerModeEnabled)
        let none = PowerStateSource.reading([nil, nil, nil, nil])
        #expect(none.value == .unknown && none.source == nil)
    }
}

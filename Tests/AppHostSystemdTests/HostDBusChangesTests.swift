@testable import AppHost
import Testing

@testable import AppHostSystemd

/// What one request's `PropertiesChanged` on Host1 names: the properties whose value moved.
@Suite struct HostDBusChangesTests {
    static let db = ServiceHealth(name: "db", isRequired: true, type: "probe", condition: .healthy)
    static let active = HostStatus(state: .active, services: [db])

    @Test("the same status names nothing; a move names State and Status; a lock names both of its properties; health both of its; a service's change Services")
    func changedProperties() {
        #expect(HostDBusObject.changedProperties(from: Self.active, to: Self.active) == [])
        var background = Self.active
        background.state = .background
        #expect(HostDBusObject.changedProperties(from: Self.active, to: background) == ["State", "Status"])
        var locked = Self.active
        locked.sessionLockReason = "screen"
        #expect(HostDBusObject.changedProperties(from: Self.active, to: locked) == ["Status", "SessionLocked", "SessionLockReason"])
        var relocked = locked
        relocked.sessionLockReason = "lid"
        #expect(HostDBusObject.changedProperties(from: locked, to: relocked) == ["Status", "SessionLockReason"])
        var unhealthy = Self.active
        unhealthy.healthProblem = "db stuck"
        #expect(HostDBusObject.changedProperties(from: Self.active, to: unhealthy) == ["Status", "Healthy", "HealthProblem"])
        var restarted = Self.active
        restarted.services[0].restarts = 1
        #expect(HostDBusObject.changedProperties(from: Self.active, to: restarted).last == "Services")
    }

    @Test("the conditions: offline and low power name Status too; an expensive path, the battery name only their own")
    func conditionProperties() {
        var offline = Self.active
        offline.networkPath = NetworkPath(status: .unavailable)
        #expect(HostDBusObject.changedProperties(from: Self.active, to: offline) == ["Status", "Network"])
        var expensive = Self.active
        expensive.networkPath = NetworkPath(status: .unknown, isExpensive: true)
        #expect(HostDBusObject.changedProperties(from: Self.active, to: expensive) == ["NetworkExpensive"])
        var saver = Self.active
        saver.powerState = PowerState(isLowPowerModeEnabled: true)
        #expect(HostDBusObject.changedProperties(from: Self.active, to: saver) == ["Status", "LowPowerMode"])
        var battery = Self.active
        battery.powerState = PowerState(isOnBattery: true, batteryWarningLevel: .low)
        #expect(HostDBusObject.changedProperties(from: Self.active, to: battery) == ["OnBattery", "BatteryWarningLevel"])
    }
}

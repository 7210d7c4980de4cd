@testable import AppHost
import Testing

/// The network path and the power state: kept by the host, read live through a handle, told
/// to every service once per change, the newest replacing one that waits.
@Suite struct MachineConditionTests {
    @Test("a change reaches every service once, with cause network, the value read through the handle; the same value again is nothing")
    func aNetworkChangeReachesEveryService() async throws {
        let journal = Journal()
        let host = try makeHost(["a", "b"], journal: journal)
        try await host.withRunning {
            try await host.launched()
            _ = journal.drain()
            await host.updateNetworkPath(NetworkPath(status: .available))
            await host.updateNetworkPath(NetworkPath(status: .available))
            await host.updateNetworkPath(NetworkPath(status: .available, isExpensive: true))
            #expect(journal.drain() == [
                "a:networkDidChange(available; network)", "b:networkDidChange(available; network)",
                "a:networkDidChange(available, expensive; network)", "b:networkDidChange(available, expensive; network)",
            ])
            await host.updatePowerState(PowerState(isLowPowerModeEnabled: true, batteryWarningLevel: .none))
            #expect(journal.drain() == ["a:powerStateDidChange(low power; power)", "b:powerStateDidChange(low power; power)"])
        }
    }

    @Test("a path that flaps 1,000 times while a slow hook runs: one call, with the last value")
    func flappingMergesIntoTheLastValue() async throws {
        let journal = Journal()
        try await whileABackgroundHookWaits(journal: journal) { host, group in
            for flap in 0..<1_000 {
                group.addImmediateTask { await host.updateNetworkPath(NetworkPath(status: flap.isMultiple(of: 2) ? .unavailable : .available)) }
            }
        }
        #expect(journal.drain().filter { $0.contains("networkDidChange") } == ["a:networkDidChange(available; network)"])
    }

    @Test("a value reported before the launch is kept: a service reads it at launch, and hears of it once the host runs; after the end it is only kept")
    func aValueBeforeTheLaunch() async throws {
        let journal = Journal()
        let host = try makeHost(["a"], journal: journal)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addImmediateTask { await host.updatePowerState(PowerState(isOnBattery: true, batteryWarningLevel: .low)) }
            try await host.withRunning {
                try await host.launched()
                try await group.waitForAll()
                #expect(journal.drain().last == "a:powerStateDidChange(on battery, battery low; power)")
                await host.terminate()
            }
        }
        await host.updatePowerState(PowerState())
        #expect(!journal.drain().contains { $0.contains("powerStateDidChange") }, "no service runs to hear it")
    }

    @Test("the status names an unusual condition: offline, low power; back to normal, it says nothing of them")
    func theStatusNamesTheCondition() async throws {
        let journal = Journal()
        let host = try makeHost(["a"], journal: journal)
        try await host.withRunning {
            try await host.launched()
            #expect(host.status.description == "active · 1 service", "unknown is not offline")
            await host.updateNetworkPath(NetworkPath(status: .unavailable))
            await host.updatePowerState(PowerState(isLowPowerModeEnabled: true, isOnBattery: true))
            #expect(host.status.description == "active · 1 service · offline · low power")
            #expect(host.status.networkPath == NetworkPath(status: .unavailable) && host.status.powerState.isOnBattery)
            await host.updateNetworkPath(NetworkPath(status: .available, isExpensive: true))
            await host.updatePowerState(PowerState(isOnBattery: true))
            #expect(host.status.description == "active · 1 service")
        }
    }
}

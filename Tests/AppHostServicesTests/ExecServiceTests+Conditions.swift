import AppHost
import AppHostSystemd
import AppHostTestKit
import AppHostTestSupport
import Foundation
import Testing

// The machine's conditions in an exec program's environment, on their own events and on others.
extension ExecServiceTests {
    @Test("on networkDidChange and powerStateDidChange the program gets the conditions now: APPHOST_NETWORK, APPHOST_NETWORK_EXPENSIVE, APPHOST_LOW_POWER, APPHOST_ON_BATTERY")
    func theConditionsAreInTheEnvironment() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/events.txt"
        let script = "echo \"$APPHOST_EVENT $APPHOST_NETWORK $APPHOST_NETWORK_EXPENSIVE $APPHOST_LOW_POWER $APPHOST_ON_BATTERY\" >> \(output)"
        let host = try PluggableApplicationHost(
            services: [Self.descriptor("hook", [
                "on": .array([.string("networkDidChange"), .string("powerStateDidChange"), .string("didEnterBackground")]),
                "run": .array([.string("sh"), .string("-c"), .string(script)]),
            ])],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state"),
            logger: CapturedLogs().logger()
        )
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            await host.updateNetworkPath(NetworkPath(status: .unavailable))
            await host.updateNetworkPath(NetworkPath(status: .available, isExpensive: true))
            await host.updatePowerState(PowerState(isLowPowerModeEnabled: true, isOnBattery: true, batteryWarningLevel: .low))
        }
        #expect(readLines(output) == [
            "didEnterBackground unknown 0 0 0",
            "networkDidChange unavailable 0 0 0",
            "networkDidChange available 1 0 0",
            "powerStateDidChange available 1 1 1",
        ])
    }
}

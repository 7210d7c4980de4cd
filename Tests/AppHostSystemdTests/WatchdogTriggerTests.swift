import AppHost
import AppHostTestSupport
@testable import AppHostSystemd
import Foundation
import Logging
import Testing

/// `WATCHDOG=trigger`: the notify service sends it with the status that says the host is unhealthy.
@Suite struct WatchdogTriggerTests {
    /// Never returns from `applicationDidEnterBackground` (until cancelled).
    struct Hangs: ApplicationService {
        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            try await Task.sleep(for: .seconds(3600))
        }
    }

    func statuses(triggersWatchdog: Bool) async throws -> [String] {
        let directory = try makeTemporaryDirectory("apphost-trigger")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try DatagramReceiver(directory + "/notify")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        let host = try PluggableApplicationHost(
            services: [ServiceDescriptor(name: "hang", service: Hangs())],
            configuration: .init(hookDeadline: .milliseconds(50), terminateDeadline: .milliseconds(100), stallLimit: .milliseconds(300)),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        let notify = SystemdNotifyService(host: host, notifier: notifier, triggersWatchdog: triggersWatchdog)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            group.addTask { await notify.run() }
            try await host.launched()
            try await host.enterBackground()
            var seen: [String] = []
            while let next = await ReadinessConditionTests.datagram(receiver) {
                seen.append(next)
                if next.contains("unhealthy") { break }
            }
            await host.terminate()
            group.cancelAll()
            return seen
        }
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

    /// Loses its database while it takes new settings.
    struct FailsOnUpdate: ApplicationService {
        func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceConfiguration) async throws -> ConfigurationUpdate {
            application.reportUnhealthy("database gone")
            return .applied
        }
    }

    @Test("a host that turns unhealthy as a reload ends: its READY=1 carries WATCHDOG=trigger")
    func triggersWithTheReloadsReady() async throws {
        let directory = try makeTemporaryDirectory("apphost-trigger")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try DatagramReceiver(directory + "/notify")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        let service = FailsOnUpdate()
        let descriptor = { (interval: String) in
            ServiceDescriptor(name: "db", configuration: ServiceConfiguration(["interval": .string(interval)])) { service }
        }
        let host = try PluggableApplicationHost(services: [descriptor("1s")], logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let notify = SystemdNotifyService(host: host, notifier: notifier, triggersWatchdog: true)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            group.addTask { await notify.run() }
            try await host.launched()
            func untilReady() async -> [String] {
                var seen: [String] = []
                while let next = await ReadinessConditionTests.datagram(receiver) {
                    seen.append(next)
                    if next.contains("READY=1") { break }
                }
                return seen
            }
            #expect(await untilReady().last == "READY=1\nSTATUS=active · 1 service")
            _ = try await host.reload([descriptor("2s")])
            let seen = await untilReady()
            #expect(seen.last == "READY=1\nSTATUS=active · 1 service · unhealthy: db reports: database gone\nWATCHDOG=trigger", "\(seen)")
            await host.terminate()
            group.cancelAll()
        }
    }
}

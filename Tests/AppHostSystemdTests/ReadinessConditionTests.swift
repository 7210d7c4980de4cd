import AppHost
import AppHostTestSupport
@testable import AppHostSystemd
import Foundation
import Logging
import Testing

/// An embedding program's readiness: the launch's `READY=1` waits for its conditions.
@Suite struct ReadinessConditionTests {
    struct Idle: ApplicationService {}

    /// The next datagram, read on a thread of its own so no test pool thread blocks in recv.
    static func datagram(_ receiver: DatagramReceiver) async -> String? {
        nonisolated(unsafe) let receiver = receiver
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread { continuation.resume(returning: receiver.receive()) }.start()
        }
    }

    @Test("READY=1 waits for every condition; meanwhile STATUS= names what it waits for")
    func readyWaitsForTheProgramsConditions() async throws {
        let directory = try makeTemporaryDirectory("apphost-ready")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try DatagramReceiver(directory + "/notify")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        let host = try PluggableApplicationHost(
            services: [ServiceDescriptor(name: "idle", service: Idle())],
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        let http = ReadinessCondition("http")
        let database = ReadinessCondition("database")
        let notify = SystemdNotifyService(host: host, notifier: notifier, waitingFor: [http, database])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            group.addTask { await notify.run() }
            try await host.launched()

            var before: [String] = []
            while let next = await Self.datagram(receiver) {
                before.append(next)
                if next.contains("waiting for") { break }
            }
            #expect(before.last == "STATUS=active · 1 service · waiting for http, database", "\(before)")
            #expect(!before.contains { $0.contains("READY=1") }, "\(before)")

            http.markReady()
            #expect(await Self.datagram(receiver) == "STATUS=active · 1 service · waiting for database")
            // A request while held: its status still names the wait.
            #expect(try await host.enterBackground())
            #expect(await Self.datagram(receiver) == "STATUS=background · 1 service · waiting for database")
            database.markReady()
            #expect(await Self.datagram(receiver) == "READY=1\nSTATUS=background · 1 service")
            database.markReady()
            #expect(try await host.enterForeground())
            #expect(await Self.datagram(receiver) == "STATUS=active · 1 service")

            await host.terminate()
            group.cancelAll()
        }
    }

    @Test("a condition marked ready before the launch ends holds nothing back")
    func aConditionReadyEarlyHoldsNothing() async throws {
        let directory = try makeTemporaryDirectory("apphost-ready")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try DatagramReceiver(directory + "/notify")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": receiver.notifySocket])
        let host = try PluggableApplicationHost(services: [], logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let early = ReadinessCondition("early")
        early.markReady()
        #expect(early.isReady)
        let notify = SystemdNotifyService(host: host, notifier: notifier, waitingFor: [early])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            group.addTask { await notify.run() }
            try await host.launched()
            var seen: [String] = []
            while let next = await Self.datagram(receiver) {
                seen.append(next)
                if next.contains("READY=1") { break }
            }
            #expect(seen.last == "READY=1\nSTATUS=active · 0 services", "\(seen)")
            #expect(!seen.contains { $0.contains("waiting for") })
            await host.terminate()
            group.cancelAll()
        }
    }
}

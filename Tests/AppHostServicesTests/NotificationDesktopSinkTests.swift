@testable import AppHostServices
import AppHost
import AppHostSupport
import Logging
import Synchronization
import AppHostTestKit
import AppHostTestSupport
import Testing

/// The desktop sink through a transport of the test's: what the service hands it, and how it
/// lives with one that is missing, off or failing. The real transport (sd-bus on the edge loop)
/// is DesktopNotificationClientTests'.
@Suite struct NotificationDesktopSinkTests {
    /// A transport that records what it is given, and fails while told to.
    final class RecordingTransport: DesktopNotificationTransport {
        struct Sent: Sendable, Equatable {
            let appName: String
            let summary: String
            let body: String
        }

        let sent = TestLog<Sent>()
        let failure = Mutex<String?>(nil)
        let unavailable: String?

        init(unavailable: String? = nil) {
            self.unavailable = unavailable
        }

        func unavailability() async -> String? { unavailable }

        func notify(appName: String, summary: String, body: String) async throws {
            if let reason = failure.withLock({ $0 }) { throw TransportFailure(reason: reason) }
            sent.append(Sent(appName: appName, summary: summary, body: body))
        }
    }

    struct TransportFailure: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    struct OwnNotifications: ApplicationService {}

    @Test func theTransportGetsTheAppNameTitleAndBodyAndOnlyARedactedOneWhileLocked() async throws {
        let transport = RecordingTransport()
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop", "journal"], appName: "apphostd-test"),
            desktopNotifications: transport
        )
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            host.bus.publish(ConfigurationReloadDidFail(message: "line 4: bad duration"))
            let sent = await transport.sent.first { _ in true }
            #expect(sent?.appName == "apphostd-test")
            #expect(sent?.summary == "Configuration reload failed")
            #expect(sent?.body.contains("line 4: bad duration") == true)

            try await host.setSessionLocked(true)
            host.bus.publish(ConfigurationReloadDidFail(message: "while locked"))
            let redacted = await transport.sent.first { $0.body.contains("new notification") }
            #expect(redacted == .init(appName: "apphostd-test", summary: "apphostd-test", body: "1 new notification"))
        }
        #expect(!transport.sent.all.contains { $0.body.contains("while locked") })
        #expect(!logs.all.contains { $0.level >= .error })
    }

    @Test("without a transport, or with one that says the bus is missing, the desktop sink says so once and stays off; the journal goes on", arguments: [nil, "no session bus at unix:path=/nonexistent/bus: No such file or directory"])
    func aDesktopSinkWithoutABusSaysSoOnce(unavailable: String?) async throws {
        let transport = unavailable.map { RecordingTransport(unavailable: $0) }
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop", "journal"]),
            desktopNotifications: transport
        )
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            host.bus.publish(ConfigurationReloadDidFail(message: "one"))
            host.bus.publish(ConfigurationReloadDidFail(message: "two"))
            #expect(await logs.first { $0.metadata["notification_body"]?.hasPrefix("two") == true } != nil)
        }
        let reports = logs.all.filter { $0.message.contains("desktop notifications are off") }
        #expect(reports.count == 1)
        #expect(reports.first?.message.contains(unavailable ?? "BuiltinServices.registry(desktopNotifications:") == true, "\(reports)")
        #expect(transport?.sent.all.isEmpty ?? true)
        #expect(!logs.all.contains { $0.level >= .error })
    }

    @Test func aFailingTransportIsReportedOnceAndRetriedWithBackoffInOrder() async throws {
        let transport = RecordingTransport()
        transport.failure.withLock { $0 = "org.freedesktop.DBus.Error.ServiceUnknown: no notification server" }
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop"]),
            desktopNotifications: transport, maximumBackoff: .seconds(60)
        )
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            host.bus.publish(ConfigurationReloadDidFail(message: "first"))
            let failure = await logs.first { $0.level == .error && $0.message.contains("desktop notifications failed") }
            #expect(failure?.message.contains("ServiceUnknown") == true)
            host.bus.publish(ConfigurationReloadDidFail(message: "second"))

            // The server appears; the retry (after 1s, then 2s) delivers both, in order.
            transport.failure.withLock { $0 = nil }
            #expect(await transport.sent.first { $0.body.hasPrefix("second") } != nil)
            #expect(transport.sent.all.map { String($0.body.prefix(6)) } == ["first.", "second"])
            #expect(await logs.first { $0.message.contains("desktop notifications work again") } != nil)
        }
        #expect(logs.all.filter { $0.level == .error }.count == 1)
    }

    @Test func theDaemonsTransportReplacesOnlyTheBuiltinNotificationType() throws {
        let transport = RecordingTransport()
        let builtin = BuiltinServices.providingDesktopNotifications(transport, in: BuiltinServices.registry())
        let made = try builtin.makeService(type: NotificationService.typeName, configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop"]))
        #expect((made as? NotificationService)?.hasDesktopTransport == true)
        #expect((try BuiltinServices.registry().makeService(type: NotificationService.typeName, configuration: NotificationServiceTests.settings(on: ["reloadFailed"])) as? NotificationService)?.hasDesktopTransport == false)

        var own = ServiceRegistry()
        own.register(NotificationService.typeName, summary: "mine") { OwnNotifications() }
        let kept = try BuiltinServices.providingDesktopNotifications(transport, in: own).makeService(type: NotificationService.typeName, configuration: ServiceSection([:]))
        #expect(kept is OwnNotifications)
    }
}

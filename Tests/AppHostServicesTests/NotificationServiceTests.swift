@testable import AppHostServices
import AppHost
import Foundation
import Logging
import AppHostTestKit
import Testing

@Suite struct NotificationServiceTests {
    static func settings(on: [String], sinks: [String] = ["journal"], window: String = "10s", appName: String = "apphostd") -> ServiceSection {
        ServiceSection([
            "on": .array(on.map { .string($0) }),
            "sinks": .array(sinks.map { .string($0) }),
            "coalesce-window": .string(window),
            "app-name": .string(appName),
        ])
    }

    static func isNotification(_ record: CapturedLogRecord) -> Bool {
        record.metadata["message_id"] != nil
    }

    @Test func journalRecordsCarryAStableMessageID() async throws {
        let service = try NotificationService(configuration: Self.settings(on: ["reloadFailed", "didEnterBackground"]))
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            host.bus.publish(ConfigurationReloadDidFail(message: "apphostd.yaml:3: services[0].type: unknown type"))
            let reload = await logs.first { $0.metadata["notification_kind"] == "reloadFailed" }
            #expect(reload?.level == .notice)
            #expect(reload?.metadata["message_id"] == "04a1203b24e14d02a94bf71e1a233c4b")
            #expect(reload?.metadata["notification_title"] == "Configuration reload failed")
            #expect(reload?.metadata["notification_body"]?.contains("services[0].type: unknown type") == true)

            try await host.enterBackground()
            let background = await logs.first { $0.metadata["notification_kind"] == "lifecycle" }
            #expect(background?.metadata["notification_title"] == "Moved to the background")
            #expect(background?.metadata["message_id"] == LocalNotification.Kind.lifecycle.messageID)
        }
        // journald's format: 128 bits as 32 lowercase hex digits, one per kind, all different.
        let ids = LocalNotification.Kind.allCases.map(\.messageID)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        // Events the config did not choose do not notify (didBecomeActive at launch, foreground).
        #expect(logs.all.filter(Self.isNotification).count == 2)
    }

    // Fails where the run loop sends without the request's context: no request_id.
    @Test("a notification's journal record carries the id of the request that caused it")
    func notificationsCarryTheirRequestID() async throws {
        let service = try NotificationService(configuration: Self.settings(on: ["didEnterBackground"]))
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            let records = host.bus.subscribe(to: LifecycleEventRecord.self)
            try await host.enterBackground()
            var background: LifecycleEventRecord?
            for await record in records where record.event == .didEnterBackground {
                background = record
                break
            }
            let id = try #require(background?.requestID)
            let notification = await logs.first { $0.metadata["notification_kind"] == "lifecycle" }
            #expect(notification?.metadata["request_id"] == id, "\(String(describing: notification))")
        }
    }

    @Test func contentIsRedactedWhileTheSessionIsLocked() async throws {
        let service = try NotificationService(configuration: Self.settings(on: ["reloadFailed"], appName: "kiosk"))
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            try await host.setSessionLocked(true)
            host.bus.publish(ConfigurationReloadDidFail(message: "token=very-private"))
            let redacted = await logs.first(where: Self.isNotification)
            #expect(redacted?.metadata["notification_title"] == "kiosk")
            #expect(redacted?.metadata["notification_body"] == "1 new notification")
            #expect(redacted?.metadata["notification_redacted"] == "true")

            try await host.setSessionLocked(false)
            host.bus.publish(ConfigurationReloadDidFail(message: "token=now-visible"))
            let clear = await logs.first { $0.metadata["notification_body"]?.contains("now-visible") == true }
            #expect(clear?.metadata["notification_title"] == "Configuration reload failed")
        }
        #expect(!logs.all.contains { $0.message.contains("very-private") || $0.metadata.values.contains { $0.contains("very-private") } })
    }

    @Test func identicalNotificationsWithinTheWindowAreSentOnce() async throws {
        let service = try NotificationService(configuration: Self.settings(on: ["reloadFailed"], window: "400ms"))
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            for _ in 0..<3 { host.bus.publish(ConfigurationReloadDidFail(message: "same problem")) }
            host.bus.publish(ConfigurationReloadDidFail(message: "other problem"))
            let summary = await logs.first { $0.metadata["notification_body"]?.contains("repeated 2 more times") == true }
            #expect(summary?.metadata["notification_count"] == "2")
            let bodies = logs.all.filter(Self.isNotification).compactMap { $0.metadata["notification_body"] }
            #expect(bodies.filter { $0.hasPrefix("same problem") }.count == 2)
            #expect(bodies.filter { $0.hasPrefix("other problem") }.count == 1)
        }
    }

    @Test func coalescedNotificationsAreCountedWhenRedacted() async throws {
        let service = try NotificationService(configuration: Self.settings(on: ["reloadFailed"], window: "300ms"))
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            try await host.setSessionLocked(true)
            for _ in 0..<4 { host.bus.publish(ConfigurationReloadDidFail(message: "again")) }
            #expect(await logs.first { $0.metadata["notification_body"] == "1 new notification" } != nil)
            #expect(await logs.first { $0.metadata["notification_body"] == "3 new notifications" } != nil)
        }
    }

    @Test func sessionLockChangesAndOverrunsNotify() async throws {
        let service = try NotificationService(configuration: Self.settings(on: ["sessionLocked", "sessionUnlocked", "overran"]))
        let logs = CapturedLogs()
        try await withRunningHost([
            ServiceDescriptor(name: "notification", service: service),
            ServiceDescriptor(name: "slow", deadline: .milliseconds(50), service: SlowBackgroundService()),
        ], logs: logs) { host in
            try await host.enterBackground()
            let overrun = await logs.first { $0.metadata["notification_kind"] == "overran" }
            #expect(overrun?.metadata["notification_body"]?.contains("slow overran applicationDidEnterBackground") == true)
            host.bus.publish(SessionLockDidChange(isLocked: true, reason: "entered background"))
            let locked = await logs.first { $0.metadata["notification_kind"] == "sessionLocked" }
            #expect(locked?.metadata["message_id"] == "273ba9bfc45d40bb829c0361975ade64")
            #expect(locked?.metadata["notification_body"] == "1 new notification")
            host.bus.publish(SessionLockDidChange(isLocked: false, reason: "entered foreground"))
            let unlocked = await logs.first { $0.metadata["notification_kind"] == "sessionUnlocked" }
            #expect(unlocked?.metadata["notification_title"] == "Session unlocked")
        }
    }

    @Test func settingsAreValidatedStrictly() {
        #expect(throws: ConfigurationError.self) { try NotificationService(configuration: ServiceSection(["on": .array([.string("didExplode")])])) }
        #expect(throws: ConfigurationError.self) { try NotificationService(configuration: ServiceSection(["on": .array([.string("willTerminate")])])) }
        #expect(throws: ConfigurationError.self) { try NotificationService(configuration: ServiceSection(["sinks": .array([.string("pager")])])) }
        #expect(throws: ConfigurationError.self) { try NotificationService(configuration: ServiceSection(["sinks": .array([])])) }
        #expect(throws: ConfigurationError.self) { try NotificationService(configuration: ServiceSection(["coalesce-window": .string("often")])) }
        #expect(throws: ConfigurationError.self) { try NotificationService(configuration: ServiceSection(["colour": .string("red")])) }
        let defaults = try? NotificationService(configuration: .empty)
        #expect(defaults?.sinkNames == ["journal"])
        #expect(defaults?.coalesceWindow == .seconds(10))
        #expect(defaults?.triggers.contains(.reloadFailed) == true)
    }

    @Test func backoffDoublesUpToTheCap() {
        let delays = (1...8).map { NotificationOutbox.backoff(afterFailures: $0, maximum: .seconds(60)) }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(32), .seconds(60), .seconds(60)])
    }
}

/// Overruns its deadline in `didEnterBackground`, so the host reports an overrun.
struct SlowBackgroundService: ApplicationService {
    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        try await Task.sleep(for: .milliseconds(300))
    }
}

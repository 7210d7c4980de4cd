@testable import AppHostServices
import AppHost
import CSystemd
import Foundation
import Logging
import Synchronization
import AppHostTestKit
import AppHostTestSupport
import NotificationTestSupport
import Testing

@Suite struct NotificationDesktopSinkTests {
    @Test func notifyReachesANotificationServerOnTheSessionBus() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let server = try await TestNotificationServer.start(address: bus.address)
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop", "journal"], appName: "apphostd-test"),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        )
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            host.bus.publish(ConfigurationReloadDidFail(message: "line 4: bad duration"))
            let call = await server.calls.first { _ in true }
            #expect(call?.appName == "apphostd-test")
            #expect(call?.summary == "Configuration reload failed")
            #expect(call?.body.contains("line 4: bad duration") == true)
            #expect(call?.replacesID == 0)
            #expect(call?.icon == "")
            #expect(call?.expireTimeout == -1)

            try await host.setSessionLocked(true)
            host.bus.publish(ConfigurationReloadDidFail(message: "while locked"))
            let redacted = await server.calls.first { $0.body.contains("new notification") }
            #expect(redacted?.summary == "apphostd-test")
            #expect(redacted?.body == "1 new notification")
        }
        #expect(!server.calls.all.contains { $0.body.contains("while locked") })
        #expect(!logs.all.contains { $0.level >= .error })
        await server.stop()
    }

    @Test func withoutASessionBusTheDesktopSinkSaysSoOnceAndStaysOff() async throws {
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop", "journal"]),
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent-h4b/bus"]
        )
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            host.bus.publish(ConfigurationReloadDidFail(message: "one"))
            host.bus.publish(ConfigurationReloadDidFail(message: "two"))
            #expect(await logs.first { $0.metadata["notification_body"]?.hasPrefix("two") == true } != nil)
        }
        let reports = logs.all.filter { $0.message.contains("desktop notifications are off") }
        #expect(reports.count == 1)
        #expect(reports.first?.message.contains("DBUS_SESSION_BUS_ADDRESS") == true)
        #expect(!logs.all.contains { $0.level >= .error })
    }

    @Test("the session bus: DBUS_SESSION_BUS_ADDRESS as given, else the user's bus as sd_bus_open_user finds it")
    func theSessionBusIsChosenAsSdBusWould() {
        #expect(DesktopNotificationSink.sessionBus { $0 == "DBUS_SESSION_BUS_ADDRESS" ? "unix:path=/x" : nil } == .address("unix:path=/x"))
        #expect(DesktopNotificationSink.sessionBus { $0 == "XDG_RUNTIME_DIR" ? "/run/user/1000" : nil } == .user, "sd-bus reads it itself")
        #expect(DesktopNotificationSink.sessionBus { _ in nil } == .user)
    }

    @Test("sd-bus says whether the bus can be reached: not at a missing path nor at a regular file (off, with sd-bus's reason), at a listening socket yes")
    func theSinkIsOffWhereSdBusCannotConnect() throws {
        let directory = try makeTemporaryDirectory("apphost-runtime")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sink = { DesktopNotificationSink(bus: .address("unix:path=\(directory)/bus"), appName: "x") }
        let missing = sink().unavailability()
        #expect(missing?.hasPrefix("no session bus at unix:path=\(directory)/bus (DBUS_SESSION_BUS_ADDRESS): ") == true, "\(missing ?? "nil")")
        #expect(missing?.contains("No such file or directory") == true, "\(missing ?? "nil")")
        #expect(FileManager.default.createFile(atPath: directory + "/bus", contents: Data()))
        #expect(sink().unavailability() != nil, "a regular file is not a bus")
        try FileManager.default.removeItem(atPath: directory + "/bus")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array((directory + "/bus").utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        try #require(bound == 0 && listen(listener, 1) == 0)
        #expect(sink().unavailability() == nil)
    }

    @Test func aFailingSinkIsReportedOnceAndRetriedWithBackoff() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop"]),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        )
        let logs = CapturedLogs()
        try await withRunningHost([ServiceDescriptor(name: "notification", service: service)], logs: logs) { host in
            // Nobody owns org.freedesktop.Notifications yet: the call fails.
            host.bus.publish(ConfigurationReloadDidFail(message: "first"))
            let failure = await logs.first { $0.level == .error && $0.message.contains("desktop notifications failed") }
            #expect(failure?.message.contains("ServiceUnknown") == true)
            host.bus.publish(ConfigurationReloadDidFail(message: "second"))

            // A server appears; the retry (after 1s, then 2s) delivers both, in order.
            let server = try await TestNotificationServer.start(address: bus.address)
            let second = await server.calls.first { $0.body.hasPrefix("second") }
            #expect(second != nil)
            #expect(server.calls.all.map { String($0.body.prefix(6)) } == ["first.", "second"])
            #expect(await logs.first { $0.message.contains("desktop notifications work again") } != nil)
            await server.stop()
        }
        #expect(logs.all.filter { $0.level == .error }.count == 1)
    }
}

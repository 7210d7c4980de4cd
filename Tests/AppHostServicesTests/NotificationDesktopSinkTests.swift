@testable import AppHostServices
import AppHost
import CSystemd
import Foundation
import Logging
import Synchronization
import Testing

/// A private `dbus-daemon` for one test, listening on a socket in a temp directory.
final class TestSessionBus: Sendable {
    let address: String
    private let pid: pid_t

    private init(address: String, pid: pid_t) {
        self.address = address
        self.pid = pid
    }

    static func start() throws -> TestSessionBus {
        let directory = try makeSessionTestDirectory()
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        // posix_spawn rather than Foundation's Process, whose waitUntilExit spins on a
        // concurrency thread here.
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw TestBusError(message: "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        let arguments = ["/usr/bin/dbus-daemon", "--config-file=\(directory)/bus.conf", "--nofork", "--print-address=1"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else { throw TestBusError(message: "cannot start dbus-daemon: \(String(cString: strerror(spawned)))") }
        // The daemon prints its address once it listens: read up to the newline.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while !bytes.contains(UInt8(ascii: "\n")) {
            let count = read(pipeEnds[0], &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let address = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard address.hasPrefix("unix:") else {
            kill(pid, SIGKILL)
            waitpid(pid, nil, 0)
            throw TestBusError(message: "dbus-daemon printed no address: \(address)")
        }
        return TestSessionBus(address: address, pid: pid)
    }

    func stop() {
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
    }
}

struct TestBusError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// What the test notification server received in one `Notify` call.
struct ReceivedNotify: Sendable, Equatable {
    let appName: String
    let replacesID: UInt32
    let icon: String
    let summary: String
    let body: String
    let expireTimeout: Int32
}

/// A small freedesktop notification server for the tests: owns `org.freedesktop.Notifications`
/// on a bus, answers `Notify` with an id and records every call. Written with sd-bus and run on
/// a thread of its own, because sd-bus blocks.
final class TestNotificationServer: Sendable {
    let calls = AwaitedLog<ReceivedNotify>()
    private let readiness = AwaitedLog<String>()
    private let isStopped = Atomic<Bool>(false)
    private let finished = AwaitedLog<Bool>()

    /// Connects to `address`, takes the name and returns once it owns it.
    static func start(address: String) async throws -> TestNotificationServer {
        let server = TestNotificationServer()
        let thread = Thread { server.serve(address: address) }
        thread.start()
        let outcome = await server.readiness.first { _ in true }
        guard outcome == "ready" else { throw TestBusError(message: "notification server: \(outcome ?? "timed out")") }
        return server
    }

    func stop() async {
        isStopped.store(true, ordering: .relaxed)
        _ = await finished.first { _ in true }
    }

    private func serve(address: String) {
        defer { finished.append(true) }
        var bus: OpaquePointer?
        guard sd_bus_new(&bus) >= 0, let bus else { return readiness.append("sd_bus_new failed") }
        defer { sd_bus_flush_close_unref(bus) }
        var result = sd_bus_set_address(bus, address)
        if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
        if result >= 0 { result = sd_bus_start(bus) }
        if result >= 0 {
            result = sd_bus_add_object(bus, nil, "/org/freedesktop/Notifications", { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                return Unmanaged<TestNotificationServer>.fromOpaque(userdata).takeUnretainedValue().handle(message)
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        if result >= 0 { result = sd_bus_request_name(bus, "org.freedesktop.Notifications", 0) }
        guard result >= 0 else { return readiness.append("setup failed: \(String(cString: strerror(-result)))") }
        readiness.append("ready")
        while !isStopped.load(ordering: .relaxed) {
            let processed = sd_bus_process(bus, nil)
            if processed < 0 { break }
            if processed > 0 { continue }
            // Wakes up at least every 50ms to notice `stop()`.
            _ = sd_bus_wait(bus, 50_000)
        }
    }

    private func handle(_ message: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(message, "org.freedesktop.Notifications", "Notify") > 0 else { return 0 }
        func string() -> String {
            var value: UnsafePointer<CChar>?
            _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &value)
            return value.map { String(cString: $0) } ?? "<unreadable>"
        }
        let appName = string()
        var replacesID: UInt32 = 99
        _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &replacesID)
        let icon = string()
        let summary = string()
        let body = string()
        _ = sd_bus_message_skip(message, "asa{sv}")
        var expireTimeout: Int32 = 99
        _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "i")), &expireTimeout)
        let call = ReceivedNotify(appName: appName, replacesID: replacesID, icon: icon, summary: summary, body: body, expireTimeout: expireTimeout)
        calls.append(call)
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return -1 }
        defer { sd_bus_message_unref(reply) }
        var id = UInt32(calls.all.count)
        _ = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "u")), &id)
        return sd_bus_send(nil, reply, nil) >= 0 ? 1 : -1
    }
}

@Suite struct NotificationDesktopSinkTests {
    @Test func notifyReachesANotificationServerOnTheSessionBus() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let server = try await TestNotificationServer.start(address: bus.address)
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop", "journal"], appName: "apphostd-test"),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        )
        let logs = AwaitedLog<CapturedLogRecord>()
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
            environment: ["XDG_RUNTIME_DIR": "/nonexistent-h4b"]
        )
        let logs = AwaitedLog<CapturedLogRecord>()
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

    @Test func aFailingSinkIsReportedOnceAndRetriedWithBackoff() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let service = try NotificationService(
            configuration: NotificationServiceTests.settings(on: ["reloadFailed"], sinks: ["desktop"]),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        )
        let logs = AwaitedLog<CapturedLogRecord>()
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

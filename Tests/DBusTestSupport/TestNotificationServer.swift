import AppHostTestKit
import CSystemd
import Foundation
import Synchronization

/// A freedesktop notification server for tests: owns `org.freedesktop.Notifications` on a bus,
/// answers `Notify` with an id and records every call. sd-bus blocks, so it serves on a thread
/// of its own; `stop()` ends it.
public final class TestNotificationServer: Sendable {
    /// Every `Notify` call, in order, awaitable.
    public let calls = TestLog<DesktopNotificationCall>()
    private let readiness = TestLog<String>()
    private let finished = TestLog<Bool>()
    private let isStopped = Atomic<Bool>(false)

    private init() {}

    /// Connects to the bus at `address` (`unix:path=…`) and returns once it owns the name.
    /// - Throws: `TestBusError` when it cannot connect or take the name within `timeout`.
    public static func start(address: String, timeout: Duration = .seconds(10)) async throws -> TestNotificationServer {
        let server = TestNotificationServer()
        let thread = Thread { server.serve(address: address) }
        thread.start()
        let outcome = await server.readiness.first(timeout: timeout) { _ in true }
        guard outcome == "ready" else {
            await server.stop()
            throw TestBusError(message: "notification server on \(address): \(outcome ?? "not ready within \(timeout)")")
        }
        return server
    }

    /// Stops serving and waits for the thread to end.
    public func stop() async {
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
            // Wakes at least every 50 ms to notice stop(): sd-bus has no other way to be woken.
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
        calls.append(DesktopNotificationCall(
            appName: appName, replacesID: replacesID, icon: icon, summary: summary, body: body, expireTimeout: expireTimeout
        ))
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return -1 }
        defer { sd_bus_message_unref(reply) }
        var id = UInt32(calls.count)
        _ = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "u")), &id)
        return sd_bus_send(nil, reply, nil) >= 0 ? 1 : -1
    }
}

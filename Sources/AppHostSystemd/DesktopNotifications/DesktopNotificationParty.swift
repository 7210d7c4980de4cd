import CSystemd
import Glibc
import Synchronization

/// The desktop client's side of its connection, on the loop's thread: the calls in flight, and
/// whether the connection ended for good (then the next call joins a new one).
final class DesktopNotificationParty: @unchecked Sendable {
    private(set) var member: DBusConnection.Member!
    private var calls: [ObjectIdentifier: NotifyCall] = [:]
    private let ended = Atomic(false)

    init() {
        // Weak: the connection may outlive the party (a client dropped after the loop closed,
        // whose leave was never carried out), and finishes its members when the loop ends.
        member = DBusConnection.Member(
            setUp: { _ in 0 },
            onEvent: { [weak self] event in self?.connectionChanged(event) },
            leave: { [weak self] _ in self?.failAll("the client left the bus") }
        )
    }

    /// The connection will not come back (it ended before it ever worked, or no retry could be
    /// scheduled): read from any thread.
    var hasEnded: Bool { ended.load(ordering: .acquiring) }

    private func connectionChanged(_ event: DBusConnection.Event) {
        switch event {
        case .lost(let reason), .reconnectFailed(let reason, _):
            failAll(reason)
        case .endedBeforeEstablished(let reason), .gaveUp(let reason):
            ended.store(true, ordering: .releasing)
            failAll(reason)
        }
    }

    private func failAll(_ reason: String) {
        for call in calls.values { call.finish(.failure(DesktopNotificationError(step: "Notify", message: reason))) }
        calls = [:]
    }

    /// Sends `Notify` and arms its timer; the reply, the timer or the connection's end finishes it.
    func start(_ call: NotifyCall, on connection: DBusConnection, appName: String, summary: String, body: String, timeout: Duration) {
        guard let bus = connection.bus, sd_bus_is_open(bus) > 0 else {
            call.finish(.failure(DesktopNotificationError(step: "Notify", message: "the session bus is gone; connecting again")))
            return
        }
        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(
            bus, &message, "org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "Notify"
        )
        guard result >= 0, let message else { return call.finish(.failure(DesktopNotificationError(step: "new method call", code: result))) }
        defer { sd_bus_message_unref(message) }
        result = Self.appendNotify(message, appName: appName, summary: summary, body: body)
        guard result >= 0 else { return call.finish(.failure(DesktopNotificationError(step: "build Notify", code: result))) }
        calls[ObjectIdentifier(call)] = call
        call.ended = { [unowned self] in self.calls[ObjectIdentifier($0)] = nil }
        // An answer says the connection works: a later drop is a loss, followed by a new one.
        call.answered = { [unowned self] in self.member.markEstablished() }
        let micros = max(1, timeout.wholeMicroseconds)
        var slot: OpaquePointer?
        // sd-bus's own timeout a second later than the call's timer, which answers first.
        result = sd_bus_call_async(bus, &slot, message, { reply, userdata, _ in
            Unmanaged<NotifyCall>.fromOpaque(userdata!).takeUnretainedValue().take(reply)
            return 1
        }, call.context, micros + 1_000_000)
        guard result >= 0 else { return call.finish(.failure(DesktopNotificationError(step: "Notify", code: result))) }
        call.slot = slot
        var timer: OpaquePointer?
        result = sd_event_add_time_relative(sd_bus_get_event(bus), &timer, CLOCK_MONOTONIC, micros, 0, { _, _, userdata in
            let call = Unmanaged<NotifyCall>.fromOpaque(userdata!).takeUnretainedValue()
            call.finish(.failure(DesktopNotificationError(step: "Notify", message: "no answer within the call's timeout (the bus or the notification server hangs)")))
            return 0
        }, call.context)
        // Without the timer, sd-bus's own timeout still bounds a call on a working connection.
        if result >= 0 { call.timer = timer }
    }

    /// Notify's arguments, `susssasa{sv}i`: app_name, replaces_id, app_icon, summary, body,
    /// actions, hints, expire_timeout. 0 or a negative errno.
    static func appendNotify(_ message: OpaquePointer, appName: String, summary: String, body: String) -> Int32 {
        var replacesID: UInt32 = 0
        var expireTimeout: Int32 = -1
        let steps: [() -> Int32] = [
            { appendString(message, appName) },
            { sd_bus_message_append_basic(message, type("u"), &replacesID) },
            { appendString(message, "") },
            { appendString(message, summary) },
            { appendString(message, body) },
            { sd_bus_message_open_container(message, type("a"), "s") },
            { sd_bus_message_close_container(message) },
            { sd_bus_message_open_container(message, type("a"), "{sv}") },
            { sd_bus_message_close_container(message) },
            { sd_bus_message_append_basic(message, type("i"), &expireTimeout) },
        ]
        for step in steps {
            let result = step()
            guard result >= 0 else { return result }
        }
        return 0
    }

    private static func appendString(_ message: OpaquePointer, _ text: String) -> Int32 {
        text.withCString { sd_bus_message_append_basic(message, type("s"), $0) }
    }

    private static func type(_ code: Unicode.Scalar) -> CChar {
        CChar(truncatingIfNeeded: code.value)
    }
}

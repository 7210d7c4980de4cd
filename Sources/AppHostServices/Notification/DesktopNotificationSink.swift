#if canImport(Glibc)
import AppHostSupport
import Glibc
#endif
import AppHostSystemd
import CSystemd
import Dispatch

/// Sends freedesktop notifications (`org.freedesktop.Notifications.Notify`) over the session bus.
///
/// sd-bus calls block, so they run on a serial dispatch queue of the sink's own (never on the
/// concurrency pool, never on the host's path or the edge's loop), each bounded by the sink's
/// timeout; the connection lives on that queue and is made again after a failure.
final class DesktopNotificationSink: NotificationSink {
    /// Which session bus.
    let bus: SessionDBus
    /// `app_name` of every notification.
    let appName: String
    /// How long one call may take.
    let callTimeout: Duration
    private let queue = DispatchQueue(label: "apphostd.notification.dbus")
    /// The connection (an `sd_bus *`); only touched on `queue` (and in deinit, when nothing else
    /// can).
    nonisolated(unsafe) private var connection: OpaquePointer?

    /// The session bus the sink calls on.
    enum SessionDBus: Sendable, Equatable {
        /// `DBUS_SESSION_BUS_ADDRESS` as given.
        case address(String)
        /// The user's bus as `sd_bus_open_user` finds it (`$DBUS_SESSION_BUS_ADDRESS`, else
        /// `$XDG_RUNTIME_DIR/bus`).
        case user
    }

    init(bus: SessionDBus, appName: String, callTimeout: Duration = .seconds(5)) {
        self.bus = bus
        self.appName = appName
        self.callTimeout = callTimeout
    }

    var name: String { "desktop" }

    /// Whether the bus can be reached at all: sd-bus opens it once (the connect, not the
    /// authentication, which a delivery bounds), and the sink is off when it cannot.
    func unavailability() -> String? {
        switch open() {
        case .success(let bus):
            sd_bus_close_unref(bus)
            return nil
        case .failure(let error):
            let place = switch bus {
            case .address(let text): "at \(text) (DBUS_SESSION_BUS_ADDRESS)"
            case .user: "(sd_bus_open_user: neither DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR/bus)"
            }
            return "no session bus \(place): \(SystemErrorText.describe(-error.code))"
        }
    }

    /// The session bus from `environment`: `DBUS_SESSION_BUS_ADDRESS` when it names one (a
    /// test's environment does), else the user's bus as sd-bus finds it.
    static func sessionBus(environment: (String) -> String?) -> SessionDBus {
        if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return .address(address) }
        return .user
    }

    deinit {
        if let connection { sd_bus_close_unref(connection) }
    }

    func deliver(_ notification: LocalNotification) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                do {
                    try self.send(notification)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    // MARK: On the queue

    private func send(_ notification: LocalNotification) throws(DesktopNotificationError) {
        let bus = try connected()
        do {
            try call(bus, notification)
        } catch {
            // Start over with a fresh connection next time: the bus may have gone away.
            connection = nil
            sd_bus_close_unref(bus)
            throw error
        }
    }

    /// Opens the bus, started but not yet authenticated: the connection or a negative errno.
    private func open() -> Result<OpaquePointer, ConnectFailure> {
        var made: OpaquePointer?
        var result: Int32
        switch bus {
        case .user:
            result = sd_bus_open_user(&made)
        case .address(let text):
            result = sd_bus_new(&made)
            if result >= 0 { result = sd_bus_set_address(made, text) }
            if result >= 0 { result = sd_bus_set_bus_client(made, 1) }
            if result >= 0 { result = sd_bus_start(made) }
        }
        guard result >= 0, let made else {
            if let made { sd_bus_unref(made) }
            return .failure(ConnectFailure(code: result < 0 ? result : -EINVAL))
        }
        return .success(made)
    }

    /// A negative errno of `open`.
    struct ConnectFailure: Error {
        let code: Int32
    }

    private func connected() throws(DesktopNotificationError) -> OpaquePointer {
        if let connection { return connection }
        let address = switch bus {
        case .user: "the user's bus"
        case .address(let text): text
        }
        let bus: OpaquePointer
        switch open() {
        case .success(let opened): bus = opened
        case .failure(let failure): throw DesktopNotificationError(step: "connect to \(address)", code: failure.code)
        }
        var result: Int32
        // sd_bus_call waits for the authentication without a limit of its own: bound it here,
        // so a hung bus holds a delivery for the sink's timeout, not sd-bus's 90 s.
        let deadline = ContinuousClock.now + callTimeout
        while sd_bus_is_ready(bus) <= 0 {
            let left = deadline - .now
            guard left > .zero else {
                sd_bus_close_unref(bus)
                throw DesktopNotificationError(step: "connect to \(address)", message: "the bus did not finish the authentication within \(callTimeout)")
            }
            result = sd_bus_process(bus, nil)
            if result == 0 { result = sd_bus_wait(bus, left.wholeMicroseconds) }
            guard result >= 0 else {
                sd_bus_close_unref(bus)
                throw DesktopNotificationError(step: "connect to \(address)", code: result)
            }
        }
        connection = bus
        return bus
    }

    /// `Notify` with `sd_bus_call` and the sink's timeout. On the sink's queue, never on the
    /// edge's loop.
    private func call(_ bus: OpaquePointer, _ notification: LocalNotification) throws(DesktopNotificationError) {
        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(
            bus, &message, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications", "Notify"
        )
        guard result >= 0, let message else { throw DesktopNotificationError(step: "new method call", code: result) }
        defer { sd_bus_message_unref(message) }
        // Signature susssasa{sv}i: app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout.
        var replacesID: UInt32 = 0
        var expireTimeout: Int32 = -1
        let steps: [() -> Int32] = [
            { Self.appendString(message, self.appName) },
            { sd_bus_message_append_basic(message, Self.type("u"), &replacesID) },
            { Self.appendString(message, "") },
            { Self.appendString(message, notification.title) },
            { Self.appendString(message, notification.body) },
            { sd_bus_message_open_container(message, Self.type("a"), "s") },
            { sd_bus_message_close_container(message) },
            { sd_bus_message_open_container(message, Self.type("a"), "{sv}") },
            { sd_bus_message_close_container(message) },
            { sd_bus_message_append_basic(message, Self.type("i"), &expireTimeout) },
        ]
        for step in steps {
            result = step()
            guard result >= 0 else { throw DesktopNotificationError(step: "build Notify", code: result) }
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        result = sd_bus_call(bus, message, max(1, callTimeout.wholeMicroseconds), &error, &reply)
        defer { if let reply { sd_bus_message_unref(reply) } }
        guard result >= 0 else {
            if let name = error.name {
                let detail = error.message.map { String(cString: $0) } ?? ""
                throw DesktopNotificationError(step: "Notify", message: "\(String(cString: name)): \(detail)")
            }
            throw DesktopNotificationError(step: "Notify", code: result)
        }
    }

    private static func appendString(_ message: OpaquePointer, _ text: String) -> Int32 {
        text.withCString { sd_bus_message_append_basic(message, type("s"), $0) }
    }

    private static func type(_ code: Unicode.Scalar) -> CChar {
        CChar(truncatingIfNeeded: code.value)
    }
}

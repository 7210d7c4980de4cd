#if canImport(Glibc)
import Glibc
#endif
import AppHostSystemd
import Dispatch

/// Sends freedesktop notifications (`org.freedesktop.Notifications.Notify`) over the session bus.
///
/// Bus calls block, so they run on a serial dispatch queue of the sink's own (never on the
/// concurrency pool, never on the host's path); the connection lives on that queue and is made
/// again after a failure.
final class DesktopNotificationSink: NotificationSink {
    /// The session bus address, or nil when there is none.
    let address: String?
    /// `app_name` of every notification.
    let appName: String
    /// How long one call may take.
    let callTimeout: Duration
    private let queue = DispatchQueue(label: "apphostd.notification.dbus")
    /// The connection; only touched on `queue` (and in deinit, when nothing else can).
    nonisolated(unsafe) private var connection: BusConnection?

    init(address: String?, appName: String, callTimeout: Duration = .seconds(5)) {
        self.address = address
        self.appName = appName
        self.callTimeout = callTimeout
    }

    var name: String { "desktop" }

    func unavailability() -> String? {
        address == nil ? "no session bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist)" : nil
    }

    /// The session bus address from `environment`: `DBUS_SESSION_BUS_ADDRESS`, else the socket
    /// `$XDG_RUNTIME_DIR/bus` when it exists; nil when neither.
    static func sessionBusAddress(environment: (String) -> String?) -> String? {
        if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return address }
        guard let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty else { return nil }
        let path = runtime.hasSuffix("/") ? runtime + "bus" : runtime + "/bus"
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return "unix:path=" + BusAddress.escaped(path)
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
        // Signature susssasa{sv}i: app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout.
        var arguments = BusWriter()
        arguments.string(appName)
        arguments.uint32(0)
        arguments.string("")
        arguments.string(notification.title)
        arguments.string(notification.body)
        arguments.array(elementAlignment: 4) { _ in }
        arguments.array(elementAlignment: 8) { _ in }
        arguments.int32(-1)
        let notify = BusMessage.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "Notify", signature: "susssasa{sv}i", body: arguments.bytes
        )
        do {
            _ = try bus.call(notify, step: "Notify", until: .now + callTimeout)
        } catch {
            // Start over with a fresh connection next time: the bus may have gone away.
            connection = nil
            bus.close()
            throw DesktopNotificationError(step: "Notify", message: "\(error)")
        }
    }

    private func connected() throws(DesktopNotificationError) -> BusConnection {
        if let connection { return connection }
        guard let address else { throw DesktopNotificationError(step: "connect", message: "no session bus") }
        do {
            let bus = try BusConnection(address: BusAddress(address), until: .now + callTimeout)
            connection = bus
            return bus
        } catch {
            throw DesktopNotificationError(step: "connect to \(address)", message: "\(error)")
        }
    }
}

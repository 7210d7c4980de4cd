/// How the notification service's `desktop` sink reaches a desktop: freedesktop's
/// `org.freedesktop.Notifications.Notify` on a session bus.
///
/// The service says what to show; the transport owns the bus. AppHostSystemd's
/// `DesktopNotificationClient` is the daemon's (sd-bus, asynchronous on the edge's loop); give
/// one to `BuiltinServices.registry(desktopNotifications:)` when you build your own host. Here,
/// below both, so that the services need no libsystemd edge.
public protocol DesktopNotificationTransport: Sendable {
    /// Why nothing can be shown here (no session bus), said once by the service, whose desktop
    /// sink then stays off; nil when the bus can be reached.
    func unavailability() async -> String?
    /// Shows one notification: `Notify(appName, 0, "", summary, body, [], {}, -1)`. Throws what
    /// went wrong, in words; the service retries with a backoff.
    func notify(appName: String, summary: String, body: String) async throws
}

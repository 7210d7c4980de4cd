import AppHostSupport

/// The `desktop` sink: each notification through the transport the host was given (the
/// daemon's: freedesktop's `Notify` over the session bus, asynchronous on its edge loop).
struct DesktopNotificationSink: NotificationSink {
    /// Where it goes; nil: this host was built without one, and the sink says so once.
    let transport: (any DesktopNotificationTransport)?
    /// `app_name` of every notification.
    let appName: String

    var name: String { "desktop" }

    func unavailability() async -> String? {
        guard let transport else {
            return "this host has no desktop transport (build the registry with BuiltinServices.registry(desktopNotifications: DesktopNotificationClient()))"
        }
        return await transport.unavailability()
    }

    func deliver(_ notification: LocalNotification) async throws {
        guard let transport else { return }
        try await transport.notify(appName: appName, summary: notification.title, body: notification.body)
    }
}

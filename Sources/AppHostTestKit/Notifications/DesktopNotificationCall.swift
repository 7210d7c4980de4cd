/// What one `org.freedesktop.Notifications.Notify` call carried.
public struct DesktopNotificationCall: Sendable, Hashable, CustomStringConvertible {
    /// The sending application's name.
    public let appName: String
    /// The id of the notification this one replaces; 0 for a new one.
    public let replacesID: UInt32
    /// The icon name or path.
    public let icon: String
    /// The title.
    public let summary: String
    /// The text.
    public let body: String
    /// How long it stays, in milliseconds; -1 leaves it to the server.
    public let expireTimeout: Int32

    /// `[app] summary: body`.
    public var description: String { "[\(appName)] \(summary): \(body)" }
}

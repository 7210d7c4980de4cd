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

    /// A call with the given values, to compare with what a server received.
    public init(appName: String, replacesID: UInt32 = 0, icon: String = "", summary: String, body: String, expireTimeout: Int32 = -1) {
        self.appName = appName
        self.replacesID = replacesID
        self.icon = icon
        self.summary = summary
        self.body = body
        self.expireTimeout = expireTimeout
    }

    /// `[app] summary: body`.
    public var description: String { "[\(appName)] \(summary): \(body)" }
}

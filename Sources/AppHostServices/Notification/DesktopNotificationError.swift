/// A desktop notification that could not be sent.
struct DesktopNotificationError: Error, Sendable, CustomStringConvertible {
    let step: String
    let message: String

    var description: String { "\(step): \(message)" }
}

import AppHostSupport

/// A desktop notification that could not be sent: the step, and what went wrong in words.
struct DesktopNotificationError: Error, Sendable, CustomStringConvertible {
    let step: String
    let message: String

    init(step: String, message: String) {
        self.step = step
        self.message = message
    }

    /// A failed sd-bus call: its negative errno, said.
    init(step: String, code: Int32) {
        self.init(step: step, message: SystemErrorText.reason(-code))
    }

    var description: String { "\(step): \(message)" }
}

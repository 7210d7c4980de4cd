import CSystemd

/// One `Notify` in flight, on the loop's thread: the sd-bus call and the timer that bounds it;
/// whichever ends first resumes the caller, once, and cancels the other.
final class NotifyCall: @unchecked Sendable {
    private var continuation: CheckedContinuation<Void, any Error>?
    /// The reply's slot: unref'd, it cancels the call.
    var slot: OpaquePointer?
    var timer: OpaquePointer?
    /// Called once it ended: the party forgets it.
    var ended: (NotifyCall) -> Void = { _ in }
    /// Called when the bus answered (the connection works).
    var answered: () -> Void = {}

    init(continuation: CheckedContinuation<Void, any Error>) {
        self.continuation = continuation
    }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The reply, or the error sd-bus made of a timeout or a closed connection.
    func take(_ reply: OpaquePointer?) {
        if DBusMessage.isFromClosedBus(reply) {
            return finish(.failure(DesktopNotificationError(step: "Notify", message: "the session bus closed the connection")))
        }
        let error = DBusMessage.error(of: reply)
        // sd-bus's own timeout is no answer: it says nothing of whether the connection works.
        if !["org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout"].contains(error?.name) { answered() }
        if let (name, message) = error {
            return finish(.failure(DesktopNotificationError(step: "Notify", message: "\(name): \(message)")))
        }
        finish(.success(()))
    }

    func finish(_ result: Result<Void, DesktopNotificationError>) {
        guard let continuation else { return }
        self.continuation = nil
        if let slot { sd_bus_slot_unref(slot) }
        slot = nil
        if let timer { sd_event_source_disable_unref(timer) }
        timer = nil
        ended(self)
        continuation.resume(with: result.mapError { $0 })
    }
}

import CSystemd

/// One call of a Host1 method, held (referenced) until its answer is sent on the loop's thread.
struct HostDBusCall: @unchecked Sendable {
    /// `RestartService`, `EnterBackground`, `EnterForeground` or `Reload`.
    let member: String
    /// `RestartService`'s service name.
    let argument: String?
    let message: OpaquePointer

    /// An error for the caller: its D-Bus name and text.
    struct Failure: Error {
        let name: String
        let message: String

        static func named(_ suffix: String, _ message: String) -> Failure {
            Failure(name: "org.apphost.Host1.Error." + suffix, message: message)
        }
    }

    /// Emits `ReloadFinished(id, applied, message)` on `bus`. On the loop's thread.
    static func emitReloadFinished(on bus: OpaquePointer, id: String, applied: Bool, message text: String) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, "/org/apphost/Host", "org.apphost.Host1", "ReloadFinished") >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        var flag: Int32 = applied ? 1 : 0
        guard HostDBusObject.append(string: id, to: signal) >= 0,
            sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "b")), &flag) >= 0,
            HostDBusObject.append(string: text, to: signal) >= 0
        else { return }
        _ = sd_bus_send(bus, signal, nil)
    }

    /// Sends the method's return (with `value` as its `s`, when it has one) or its error, then
    /// lets the message go. On the loop's thread.
    func answer(_ result: Result<String?, Failure>) {
        defer { sd_bus_message_unref(message) }
        switch result {
        case .success(let value):
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return }
            defer { sd_bus_message_unref(reply) }
            if let value, HostDBusObject.append(string: value, to: reply) < 0 { return }
            _ = sd_bus_send(nil, reply, nil)
        case .failure(let failure):
            var error = sd_bus_error()
            _ = sd_bus_error_set(&error, failure.name, failure.message)
            _ = sd_bus_reply_method_error(message, &error)
            sd_bus_error_free(&error)
        }
    }
}

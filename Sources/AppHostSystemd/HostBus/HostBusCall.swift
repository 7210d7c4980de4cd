import CSystemd

/// One call of a Host1 method, held (referenced) until its answer is sent on the loop's thread.
struct HostBusCall: @unchecked Sendable {
    /// `RestartService`, `EnterBackground` or `EnterForeground`.
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

    /// Sends the method's return (with `value` as its `s`, when it has one) or its error, then
    /// lets the message go. On the loop's thread.
    func answer(_ result: Result<String?, Failure>) {
        defer { sd_bus_message_unref(message) }
        switch result {
        case .success(let value):
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return }
            defer { sd_bus_message_unref(reply) }
            if let value, HostBusObject.append(string: value, to: reply) < 0 { return }
            _ = sd_bus_send(nil, reply, nil)
        case .failure(let failure):
            var error = sd_bus_error()
            _ = sd_bus_error_set(&error, failure.name, failure.message)
            _ = sd_bus_reply_method_error(message, &error)
            sd_bus_error_free(&error)
        }
    }
}

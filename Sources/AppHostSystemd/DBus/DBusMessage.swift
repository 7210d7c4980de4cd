import CSystemd

/// sd-bus messages read one way everywhere: the answers of asynchronous calls on the edge's loop,
/// and the command line's.
enum DBusMessage {
    /// Whether `reply` is one a closing connection gives each pending call: nothing to act on,
    /// the connection's `Disconnected` says why.
    static func isFromClosedBus(_ reply: OpaquePointer?) -> Bool {
        guard let bus = sd_bus_message_get_bus(reply) else { return false }
        return sd_bus_is_open(bus) <= 0
    }

    /// The D-Bus error of a reply, if it is one.
    static func error(of reply: OpaquePointer?) -> (name: String, message: String)? {
        guard let error = sd_bus_message_get_error(reply), sd_bus_error_is_set(error) != 0 else { return nil }
        return (error.pointee.name.map { String(cString: $0) } ?? "", error.pointee.message.map { String(cString: $0) } ?? "")
    }

    /// The string (`s`) or object path (`o`) at the message's position.
    static func readString(_ message: OpaquePointer?, type: UInt8 = UInt8(ascii: "s")) -> String? {
        var text: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, CChar(type), &text) >= 0, let text else { return nil }
        return String(cString: text)
    }
}

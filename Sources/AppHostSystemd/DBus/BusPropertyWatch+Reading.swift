import CSystemd

// The property dictionaries of `GetAll`'s answer and of `PropertiesChanged`, read with sd-bus.
extension BusPropertyWatch {
    /// The `a{sv}` at the message's position, only the `wanted` properties of the types `Value`
    /// has; nil when the message is not one.
    static func readProperties(_ message: OpaquePointer?, wanted: Set<String>) -> [String: Value]? {
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}") > 0 else { return nil }
        var result: [String: Value] = [:]
        while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv") > 0 {
            guard let name = DBusMessage.readString(message) else { return nil }
            if wanted.contains(name), let value = readVariant(message) {
                result[name] = value
            } else if sd_bus_message_skip(message, "v") < 0 {
                return nil
            }
            guard sd_bus_message_exit_container(message) >= 0 else { return nil }
        }
        guard sd_bus_message_exit_container(message) >= 0 else { return nil }
        return result
    }

    /// The variant at the message's position when it holds a string, a `u` or a `b`; nil, and
    /// the variant not read, otherwise.
    private static func readVariant(_ message: OpaquePointer?) -> Value? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0, type == CChar(UInt8(ascii: "v")), let contents else { return nil }
        let signature = String(cString: contents)
        guard ["s", "u", "b"].contains(signature), sd_bus_message_enter_container(message, type, contents) > 0 else { return nil }
        defer { sd_bus_message_exit_container(message) }
        switch signature {
        case "s":
            return DBusMessage.readString(message).map { .string($0) }
        case "u":
            var number: UInt32 = 0
            return sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &number) > 0 ? .uint32(number) : nil
        default:
            var flag: Int32 = 0
            return sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &flag) > 0 ? .bool(flag != 0) : nil
        }
    }

    /// The `as` at the message's position.
    static func readStrings(_ message: OpaquePointer?) -> [String]? {
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "s") > 0 else { return nil }
        var result: [String] = []
        while let text = DBusMessage.readString(message) { result.append(text) }
        _ = sd_bus_message_exit_container(message)
        return result
    }
}

import AppHostSupport
import CSystemd
import Glibc

extension HostDBusClient {
    /// Follows Host1's `PropertiesChanged`: calls `changed` with the report as it stands once
    /// the changes are followed, then with a fresh one after each change (one per request that
    /// changed something), blocking on the bus, without a timer. Returns when the daemon's name
    /// leaves the bus; throws when the connection fails or the daemon does not answer.
    package func watch(_ changed: (Report) -> Void) throws(Failure) {
        var result = sd_bus_match_signal(bus, nil, busName, Self.path, "org.freedesktop.DBus.Properties", "PropertiesChanged", nil, nil)
        guard result >= 0 else { throw Failure(name: nil, message: "cannot follow the daemon's changes: \(SystemErrorText.reason(-result))") }
        result = sd_bus_match_signal(bus, nil, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", nil, nil)
        guard result >= 0 else { throw Failure(name: nil, message: "cannot follow the daemon's name: \(SystemErrorText.reason(-result))") }
        changed(try report())
        while true {
            var message: OpaquePointer?
            result = sd_bus_process(bus, &message)
            guard result >= 0 else { throw Failure(name: nil, message: "the bus connection failed: \(SystemErrorText.reason(-result))") }
            if let message {
                defer { sd_bus_message_unref(message) }
                if sd_bus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged") > 0 {
                    changed(try report())
                } else if sd_bus_message_is_signal(message, "org.freedesktop.DBus", "NameOwnerChanged") > 0, Self.isLeaving(busName, in: message) {
                    return
                }
                continue
            }
            if result > 0 { continue }
            result = sd_bus_wait(bus, UInt64.max)
            guard result >= 0 || result == -EINTR else { throw Failure(name: nil, message: "the bus connection failed: \(SystemErrorText.reason(-result))") }
        }
    }

    /// Whether a `NameOwnerChanged` says that `name` lost its owner.
    private static func isLeaving(_ name: String, in message: OpaquePointer) -> Bool {
        guard DBusMessage.readString(message) == name, DBusMessage.readString(message) != nil else { return false }
        return DBusMessage.readString(message) == ""
    }
}

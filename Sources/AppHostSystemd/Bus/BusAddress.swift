/// A D-Bus server address (`unix:path=/run/dbus/system_bus_socket`, `unix:abstract=…`, several
/// separated by `;`), and the bus a process connects to by default, chosen as `sd_bus_open(3)`
/// chooses it.
package struct BusAddress: Sendable, Equatable {
    /// The address as given, for messages.
    package let text: String
    /// Its `unix:` sockets, in order of preference.
    let sockets: [NotifySocketAddress]
    /// Whether it is a user's bus, which only that user can reach: sd-bus lets every caller
    /// there write, and so does the daemon.
    package let isUserBus: Bool

    /// - Throws: `BusError.unsupportedAddress` when no part is a `unix:` path or abstract name.
    package init(_ text: String, isUserBus: Bool = false) throws(BusError) {
        var sockets: [NotifySocketAddress] = []
        for part in text.split(separator: ";") where part.hasPrefix("unix:") {
            for pair in part.dropFirst("unix:".count).split(separator: ",") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                guard keyValue.count == 2, let value = Self.unescaped(keyValue[1]) else { continue }
                let socket = switch keyValue[0] {
                case "path": NotifySocketAddress(value)
                case "abstract": NotifySocketAddress("@" + value)
                default: NotifySocketAddress?.none
                }
                if let socket { sockets.append(socket) }
            }
        }
        guard !sockets.isEmpty else { throw .unsupportedAddress(text) }
        self.text = text
        self.sockets = sockets
        self.isUserBus = isUserBus
    }

    /// The bus `sd_bus_open` would pick for a process with `environment`, in the cgroup
    /// `cgroupPath` (the `0::` line of /proc/self/cgroup): `DBUS_STARTER_BUS_TYPE` or
    /// `DBUS_STARTER_ADDRESS` if set; else the user's bus for a process in a user's slice (a user
    /// manager's services, a login session); else the system bus.
    static func processDefault(environment: [String: String], cgroupPath: String?) throws(BusError) -> BusAddress {
        switch environment["DBUS_STARTER_BUS_TYPE"] {
        case "system": return try system(environment)
        case "session", "user": return try user(environment)
        default: break
        }
        if let starter = environment["DBUS_STARTER_ADDRESS"], !starter.isEmpty { return try BusAddress(starter) }
        if let cgroupPath, ownerUID(ofCgroup: cgroupPath) != nil { return try user(environment) }
        return try system(environment)
    }

    /// The uid of the `user-UID.slice` that holds a cgroup, as systemd finds it: the last slice
    /// on the path from the root before the first unit that is not a slice.
    static func ownerUID(ofCgroup path: String) -> UInt32? {
        var slice: Substring?
        for component in path.split(separator: "/") {
            guard component.hasSuffix(".slice") else { break }
            slice = component
        }
        guard let slice, slice.hasPrefix("user-") else { return nil }
        return UInt32(slice.dropFirst("user-".count).dropLast(".slice".count))
    }

    private static func system(_ environment: [String: String]) throws(BusError) -> BusAddress {
        try BusAddress(environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 } ?? "unix:path=/run/dbus/system_bus_socket")
    }

    private static func user(_ environment: [String: String]) throws(BusError) -> BusAddress {
        if let session = environment["DBUS_SESSION_BUS_ADDRESS"], !session.isEmpty { return try BusAddress(session, isUserBus: true) }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { throw .noUserBus }
        return try BusAddress("unix:path=" + escaped(runtime + "/bus"), isUserBus: true)
    }

    /// A value as an address holds it: bytes outside `[-0-9A-Za-z_/.\\*]` become `%xx`.
    package static func escaped(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            let scalar = Unicode.Scalar(byte)
            if scalar.properties.isASCIIHexDigit || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || "-_/.\\*".unicodeScalars.contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return result
    }

    /// A value with its `%XX` escapes decoded; nil for a broken escape.
    private static func unescaped(_ value: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = value.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

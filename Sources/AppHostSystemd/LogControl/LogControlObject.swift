import Glibc
import Logging
import SystemPackage

/// `/org/freedesktop/LogControl1` as systemd's own daemons serve it (their
/// `bus-log-control-api.c` through sd-bus), answered here call by call: the three properties
/// through `org.freedesktop.DBus.Properties`, with `Introspectable` and `Peer` as every sd-bus
/// object has them, and sd-bus's error names and messages.
///
/// A write needs the caller's privilege, as sd-bus checks it for a property without
/// `SD_BUS_VTABLE_UNPRIVILEGED`: root or the daemon's own user, whoever calls on a user's bus.
/// The caller's uid comes from the bus (`GetConnectionUnixUser`), so a `Set` is answered in two
/// steps: `handle` asks for the uid, `complete` applies the write once it is known.
struct LogControlObject {
    static let path = "/org/freedesktop/LogControl1"
    static let interface = "org.freedesktop.LogControl1"
    static let properties = ["LogLevel", "LogTarget", "SyslogIdentifier"]

    let identifier: String
    let control: LogLevelControl
    /// Whether every caller may write (a user's bus).
    let trustsEveryCaller: Bool
    /// The daemon's effective uid, which may write as root may.
    let ownUID: UInt32

    /// What the connection does with a call.
    enum Outcome: Equatable {
        case reply(BusMessage)
        /// Ask the bus for the caller's uid, then `complete` the write with it.
        case askCallerUID(PendingWrite)
        /// The call wanted no reply, or the message is not a call.
        case none
    }

    func handle(_ message: BusMessage) -> Outcome {
        guard message.kind == .methodCall, let member = message.member else { return .none }
        let outcome = answer(message, member: member)
        if case .reply = outcome, !message.wantsReply { return .none }
        return outcome
    }

    /// The `GetConnectionUnixUser` call that asks for `write`'s caller.
    static func callerUIDQuery(for write: PendingWrite) -> BusMessage {
        var argument = BusWriter()
        argument.string(write.call.sender ?? "")
        return .call(destination: BusConnection.driver, path: BusConnection.driverPath, interface: BusConnection.driver, member: "GetConnectionUnixUser", signature: "s", body: argument.bytes)
    }

    /// The reply to a `Set` whose caller's uid the bus gave (`nil`: the bus did not say).
    func complete(_ write: PendingWrite, callerUID: UInt32?) -> BusMessage? {
        let reply = callerUID.map { $0 == 0 || $0 == ownUID } ?? false
            ? apply(write)
            : write.call.errorReply("org.freedesktop.DBus.Error.AccessDenied", "Access to \(Self.interface).\(write.property)() not permitted.")
        return write.call.wantsReply ? reply : nil
    }

    private func answer(_ call: BusMessage, member: String) -> Outcome {
        let path = call.path ?? ""
        switch (call.interface, member) {
        case ("org.freedesktop.DBus.Peer", "Ping"), (nil, "Ping"):
            return .reply(call.reply())
        case ("org.freedesktop.DBus.Peer", "GetMachineId"), (nil, "GetMachineId"):
            guard let id = Self.machineID() else {
                return .reply(call.errorReply("org.freedesktop.DBus.Error.FileNotFound", "Cannot read /etc/machine-id."))
            }
            return .reply(call.reply(signature: "s", body: Self.string(id)))
        case ("org.freedesktop.DBus.Introspectable", "Introspect"), (nil, "Introspect"):
            guard let xml = Self.introspection(of: path) else { return .reply(unknownObject(call)) }
            return .reply(call.reply(signature: "s", body: Self.string(xml)))
        default:
            break
        }
        guard path == Self.path else { return .reply(unknownObject(call)) }
        guard call.interface == "org.freedesktop.DBus.Properties" || call.interface == nil else { return .reply(unknownMethod(call, member)) }
        var reader = call.bodyReader
        switch (member, call.signature) {
        case ("Get", "ss"):
            guard let interface = try? reader.string(), let property = try? reader.string() else { return .reply(invalidArguments(call)) }
            guard interface == Self.interface, let value = value(of: property) else { return .reply(unknownProperty(call)) }
            var body = BusWriter()
            body.variant("s") { $0.string(value) }
            return .reply(call.reply(signature: "v", body: body.bytes))
        case ("GetAll", "s"):
            guard let interface = try? reader.string() else { return .reply(invalidArguments(call)) }
            guard interface.isEmpty || interface == Self.interface else {
                return .reply(call.errorReply("org.freedesktop.DBus.Error.UnknownInterface", "Unknown interface '\(interface)'."))
            }
            var body = BusWriter()
            body.array(elementAlignment: 8) { entries in
                for property in Self.properties {
                    entries.structure { entry in
                        entry.string(property)
                        entry.variant("s") { $0.string(value(of: property) ?? "") }
                    }
                }
            }
            return .reply(call.reply(signature: "a{sv}", body: body.bytes))
        case ("Set", "ssv"):
            guard let interface = try? reader.string(), let property = try? reader.string(), let type = try? reader.signature() else {
                return .reply(invalidArguments(call))
            }
            guard interface == Self.interface, Self.properties.contains(property) else { return .reply(unknownProperty(call)) }
            guard property != "SyslogIdentifier" else {
                return .reply(call.errorReply("org.freedesktop.DBus.Error.PropertyReadOnly", "Property '\(property)' is not writable."))
            }
            // sd-bus checks the value's type before the caller's privilege.
            guard type == "s" else {
                return .reply(call.errorReply("org.freedesktop.DBus.Error.InvalidArgs", "Incorrect parameters for property '\(property)', expected 's', got '\(type)'."))
            }
            guard let value = try? reader.string() else { return .reply(invalidArguments(call)) }
            let write = PendingWrite(call: call, property: property, value: value)
            return trustsEveryCaller ? .reply(apply(write)) : .askCallerUID(write)
        case ("Get", _), ("GetAll", _), ("Set", _):
            return .reply(invalidArguments(call))
        default:
            return .reply(unknownMethod(call, member))
        }
    }

    /// A `Set` of a writable property, checked and read, that waits for the caller's uid.
    struct PendingWrite: Equatable {
        let call: BusMessage
        /// `LogLevel` or `LogTarget`.
        let property: String
        let value: String
    }

    private func apply(_ write: PendingWrite) -> BusMessage {
        if write.property == "LogLevel" {
            guard let level = Self.level(systemdName: write.value) else { return invalid(write) }
            control.level = level
        } else {
            guard let target = LogLevelControl.Target(rawValue: write.value) else { return invalid(write) }
            control.target = target
        }
        return write.call.reply()
    }

    private func value(of property: String) -> String? {
        switch property {
        case "LogLevel": Self.systemdName(of: control.level)
        case "LogTarget": control.target.rawValue
        case "SyslogIdentifier": identifier
        default: nil
        }
    }

    private func invalid(_ write: PendingWrite) -> BusMessage {
        write.call.errorReply("org.freedesktop.DBus.Error.InvalidArgs", "Invalid \(write.property): \"\(write.value)\"")
    }

    private func invalidArguments(_ call: BusMessage) -> BusMessage {
        call.errorReply("org.freedesktop.DBus.Error.InvalidArgs", "Invalid arguments '\(call.signature)' to call \(call.interface ?? "").\(call.member ?? "")().")
    }

    private func unknownProperty(_ call: BusMessage) -> BusMessage {
        call.errorReply("org.freedesktop.DBus.Error.UnknownProperty", "Unknown property or interface.")
    }

    private func unknownMethod(_ call: BusMessage, _ member: String) -> BusMessage {
        call.errorReply("org.freedesktop.DBus.Error.UnknownMethod", "Unknown method '\(member)' or interface '\(call.interface ?? "")'.")
    }

    private func unknownObject(_ call: BusMessage) -> BusMessage {
        call.errorReply("org.freedesktop.DBus.Error.UnknownObject", "Unknown object '\(call.path ?? "")'.")
    }

    /// systemd's name of a swift-log level (`trace` has none: `debug`).
    static func systemdName(of level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "err"
        case .critical: "crit"
        }
    }

    /// The swift-log level of a systemd level name or number (syslog's 0–7).
    static func level(systemdName name: String) -> Logger.Level? {
        switch name {
        case "emerg", "alert", "crit", "0", "1", "2": .critical
        case "err", "3": .error
        case "warning", "4": .warning
        case "notice", "5": .notice
        case "info", "6": .info
        case "debug", "7": .debug
        default: nil
        }
    }

    private static func string(_ value: String) -> [UInt8] {
        var writer = BusWriter()
        writer.string(value)
        return writer.bytes
    }

    private static func machineID() -> String? {
        guard let bytes = try? AtomicFile.read("/etc/machine-id") else { return nil }
        let id = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        return id.count == 32 ? id : nil
    }

    /// The introspection XML of `path`: the object, or a node on the way to it; nil elsewhere.
    static func introspection(of path: String) -> String? {
        let child: String
        switch path {
        case "/": child = "  <node name=\"org\"/>\n"
        case "/org": child = "  <node name=\"freedesktop\"/>\n"
        case "/org/freedesktop": child = "  <node name=\"LogControl1\"/>\n"
        case Self.path: child = """
             <interface name="org.freedesktop.LogControl1">
              <property name="LogLevel" type="s" access="readwrite"/>
              <property name="LogTarget" type="s" access="readwrite"/>
              <property name="SyslogIdentifier" type="s" access="read">
               <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="const"/>
              </property>
             </interface>

            """
        default: return nil
        }
        return """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
            "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
             <interface name="org.freedesktop.DBus.Peer">
              <method name="Ping"/>
              <method name="GetMachineId">
               <arg type="s" name="machine_uuid" direction="out"/>
              </method>
             </interface>
             <interface name="org.freedesktop.DBus.Introspectable">
              <method name="Introspect">
               <arg name="xml_data" type="s" direction="out"/>
              </method>
             </interface>
             <interface name="org.freedesktop.DBus.Properties">
              <method name="Get">
               <arg name="interface_name" direction="in" type="s"/>
               <arg name="property_name" direction="in" type="s"/>
               <arg name="value" direction="out" type="v"/>
              </method>
              <method name="GetAll">
               <arg name="interface_name" direction="in" type="s"/>
               <arg name="props" direction="out" type="a{sv}"/>
              </method>
              <method name="Set">
               <arg name="interface_name" direction="in" type="s"/>
               <arg name="property_name" direction="in" type="s"/>
               <arg name="value" direction="in" type="v"/>
              </method>
              <signal name="PropertiesChanged">
               <arg type="s" name="interface_name"/>
               <arg type="a{sv}" name="changed_properties"/>
               <arg type="as" name="invalidated_properties"/>
              </signal>
             </interface>

            """ + child + "</node>\n"
    }
}

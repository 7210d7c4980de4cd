import AppHostSupport
import CSystemd
import Glibc

/// Follows some properties of one object of a bus name, never starting its owner: every call
/// goes out with auto-start off, so a daemon that is installed but not running (UPower,
/// networkd, power-profiles-daemon, all bus-activatable) stays so. It reads them with `GetAll`,
/// keeps them with `PropertiesChanged`, and learns with `NameOwnerChanged` that the name went or
/// came back, and then reads them again.
///
/// Touched on the loop's thread only: its owner sets it up on each new connection and takes
/// it off when it leaves.
final class BusPropertyWatch: @unchecked Sendable {
    /// One object of a bus name, and the properties of one of its interfaces that matter.
    struct Object: Sendable, Hashable {
        let name: String
        let path: String
        let interface: String
        let properties: Set<String>
    }

    /// A property's value, of the types the conditions read.
    enum Value: Sendable, Hashable, CustomStringConvertible {
        case string(String)
        case uint32(UInt32)
        case bool(Bool)

        var description: String {
            switch self {
            case .string(let text): text
            case .uint32(let number): "\(number)"
            case .bool(let flag): "\(flag)"
            }
        }
    }

    let object: Object
    /// The properties as they stand; nil while the name has no owner or they cannot be read.
    private(set) var values: [String: Value]?
    /// Why they cannot be read, when they cannot.
    private(set) var missingReason: String?
    /// Whether the first read (or the first since a new connection) has answered.
    private(set) var hasAnswered = false
    /// Called on the loop after each answer or change, with the watch; set by its owner.
    var onChange: (BusPropertyWatch) -> Void = { _ in }
    /// Called when the bus answers a read: the connection works.
    var onAnswer: () -> Void = {}
    private var slots: [OpaquePointer] = []
    /// The pending `GetAll`: a newer one cancels it, so an old answer never wins.
    private var pending: OpaquePointer?

    init(_ object: Object) {
        self.object = object
    }

    private func changed() {
        onChange(self)
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The matches and the first read on a new connection: 0 or a negative errno.
    func setUp(_ bus: OpaquePointer) -> Int32 {
        leave()
        hasAnswered = false
        let owner = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(object.name)'"
        var result = addMatch(bus, owner) { message, userdata, _ in
            Unmanaged<BusPropertyWatch>.fromOpaque(userdata!).takeUnretainedValue().ownerChanged(message)
            return 0
        }
        guard result >= 0 else { return result }
        let properties = "type='signal',sender='\(object.name)',path='\(object.path)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='\(object.interface)'"
        result = addMatch(bus, properties) { message, userdata, _ in
            Unmanaged<BusPropertyWatch>.fromOpaque(userdata!).takeUnretainedValue().propertiesChanged(message)
            return 0
        }
        guard result >= 0 else { return result }
        return read(bus)
    }

    /// Takes its matches and its pending call off the connection.
    func leave() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        if let pending { sd_bus_slot_unref(pending) }
        pending = nil
    }

    /// The connection is gone for good: nothing can be read.
    func markUnreadable(_ reason: String) {
        leave()
        values = nil
        missingReason = reason
        hasAnswered = true
    }

    private func addMatch(_ bus: OpaquePointer, _ rule: String, _ handler: sd_bus_message_handler_t) -> Int32 {
        var slot: OpaquePointer?
        let result = sd_bus_add_match_async(bus, &slot, rule, handler, { reply, userdata, _ in
            // A handler of its own: without one, sd-bus closes the connection (the daemon's)
            // when the bus refuses a match.
            Unmanaged<BusPropertyWatch>.fromOpaque(userdata!).takeUnretainedValue().matchAnswered(reply)
            return 0
        }, context)
        if let slot { slots.append(slot) }
        return result
    }

    private func matchAnswered(_ reply: OpaquePointer?) {
        guard !DBusMessage.isFromClosedBus(reply), let (name, message) = DBusMessage.error(of: reply) else { return }
        markUnreadable("the bus refused to pass on its changes (\(name): \(message))")
        changed()
    }

    /// `GetAll(interface)`, without starting the name's owner: 0 or a negative errno.
    private func read(_ bus: OpaquePointer) -> Int32 {
        if let pending { sd_bus_slot_unref(pending) }
        pending = nil
        var call: OpaquePointer?
        var result = sd_bus_message_new_method_call(bus, &call, object.name, object.path, "org.freedesktop.DBus.Properties", "GetAll")
        guard result >= 0, let call else { return result }
        defer { sd_bus_message_unref(call) }
        result = object.interface.withCString { sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
        if result >= 0 { result = sd_bus_message_set_auto_start(call, 0) }
        guard result >= 0 else { return result }
        var slot: OpaquePointer?
        result = sd_bus_call_async(bus, &slot, call, { reply, userdata, _ in
            Unmanaged<BusPropertyWatch>.fromOpaque(userdata!).takeUnretainedValue().answered(reply)
            return 0
        }, context, 0)
        pending = slot
        return result
    }

    private func answered(_ reply: OpaquePointer?) {
        if let pending { sd_bus_slot_unref(pending) }
        pending = nil
        if DBusMessage.isFromClosedBus(reply) { return }
        onAnswer()
        hasAnswered = true
        if let (name, message) = DBusMessage.error(of: reply) {
            values = nil
            missingReason = Self.missing(name) ? "not on the bus" : "\(name): \(message)"
        } else if let read = Self.readProperties(reply, wanted: object.properties) {
            values = read
            missingReason = nil
        } else {
            values = nil
            missingReason = "its answer could not be read"
        }
        changed()
    }

    /// The errors of a name without an owner, with auto-start off.
    private static func missing(_ name: String) -> Bool {
        name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }

    /// `NameOwnerChanged(name, old, new)`: gone when `new` is empty, else read again.
    private func ownerChanged(_ message: OpaquePointer?) {
        guard DBusMessage.readString(message) == object.name, DBusMessage.readString(message) != nil,
            let new = DBusMessage.readString(message), let bus = sd_bus_message_get_bus(message)
        else { return }
        if new.isEmpty {
            if let pending { sd_bus_slot_unref(pending) }
            pending = nil
            values = nil
            missingReason = "left the bus"
            hasAnswered = true
            changed()
        } else if read(bus) < 0 {
            markUnreadable("cannot ask it")
            changed()
        }
    }

    /// `PropertiesChanged(interface, changed, invalidated)`.
    private func propertiesChanged(_ message: OpaquePointer?) {
        guard DBusMessage.readString(message) == object.interface else { return }
        guard let update = Self.readProperties(message, wanted: object.properties) else { return }
        let invalidated = Self.readStrings(message) ?? []
        if !invalidated.allSatisfy({ !object.properties.contains($0) }), let bus = sd_bus_message_get_bus(message) {
            _ = read(bus)
        }
        // Before the first answer, the answer brings everything.
        guard var current = values, !update.isEmpty else { return }
        current.merge(update) { _, new in new }
        guard current != values else { return }
        values = current
        changed()
    }
}

import CSystemd
import Glibc

// The calls to logind and their answers, through sd-bus's asynchronous calls: the loop never
// waits for logind.
extension LogindClient {
    /// An argument of a call to logind.
    enum Argument {
        case string(String)
        case uint32(UInt32)
    }

    /// Calls `member` of logind's `interface` at `path` without waiting: `answered` gets the
    /// reply (or the error) on the loop, with the client as its userdata. 0 or a negative errno.
    func call(_ bus: OpaquePointer, path: String = path, interface: String = manager, _ member: String, _ arguments: [Argument], _ answered: sd_bus_message_handler_t) -> Int32 {
        var call: OpaquePointer?
        var result = sd_bus_message_new_method_call(bus, &call, Self.destination, path, interface, member)
        guard result >= 0, let call else { return result }
        defer { sd_bus_message_unref(call) }
        for argument in arguments {
            switch argument {
            case .string(let text):
                result = text.withCString { sd_bus_message_append_basic(call, CChar(UInt8(ascii: "s")), $0) }
            case .uint32(var value):
                result = sd_bus_message_append_basic(call, CChar(UInt8(ascii: "u")), &value)
            }
            guard result >= 0 else { return result }
        }
        return sd_bus_call_async(bus, nil, call, answered, context, 0)
    }

    /// Follows logind's signal `member` of `interface` at `path`; the match goes when the client
    /// leaves the connection. 0 or a negative errno.
    func match(_ bus: OpaquePointer, _ path: String, _ interface: String, _ member: String, _ handler: sd_bus_message_handler_t) -> Int32 {
        var slot: OpaquePointer?
        let result = sd_bus_match_signal_async(bus, &slot, Self.destination, path, interface, member, handler, Self.matchInstalled, context)
        if let slot { matches.append(slot) }
        return result
    }

    /// The bus's answer to AddMatch. A handler of its own: without one, sd-bus closes the
    /// connection when the bus refuses a match, and the connection is the daemon's bus name's too.
    static let matchInstalled: sd_bus_message_handler_t = { reply, userdata, _ in
        Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().matchAnswered(reply)
        return 0
    }

    /// A match the bus refused: logind's signals may not arrive, so no inhibitor is held that no
    /// one would release but logind's limit, until a new connection.
    private func matchAnswered(_ reply: OpaquePointer?) {
        guard !isFinished, !cannotFollow, let (name, message) = DBusMessage.error(of: reply) else { return }
        if DBusMessage.isFromClosedBus(reply) { return }
        cannotFollow = true
        for what in Inhibition.allCases { close(what) }
        events.yield(.unavailable(reason: "the bus refused to pass on logind's signals (\(name): \(message))"))
    }

    /// `Get(Manager, InhibitDelayMaxUSec)`: its answer says whether logind is there.
    func askDelayMax(_ bus: OpaquePointer) -> Int32 {
        call(bus, path: Self.path, interface: "org.freedesktop.DBus.Properties", "Get", [.string(Self.manager), .string("InhibitDelayMaxUSec")]) { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().delayMaxAnswered(reply)
            return 0
        }
    }

    private func delayMaxAnswered(_ reply: OpaquePointer?) {
        if DBusMessage.isFromClosedBus(reply) { return }
        guard !isFinished else { return }
        // The bus answered (logind or not): a connection worth making again when it goes.
        member?.markEstablished()
        if let (name, message) = DBusMessage.error(of: reply) {
            events.yield(.logindMissing(reason: "\(name): \(message)"))
            return
        }
        var value: UInt64 = 0
        if sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "t") >= 0,
            sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "t")), &value) >= 0, value > 0
        {
            setDelayMax(.microseconds(Int64(clamping: value)))
        }
        events.yield(.logindFound(delayMax: delayMax))
        takeInhibitorsNow()
        // Made once logind answered, so only a client that joined (and will be finished) has
        // one on the loop.
        if let event = sd_bus_message_get_bus(reply).flatMap({ sd_bus_get_event($0) }) { followSessionChanges(event) }
        // A session followed before logind was there: its LockedHint could not be had then.
        refreshLockedHint()
        resolveSession()
    }

    /// `NameOwnerChanged(org.freedesktop.login1, old, new)`: logind came (again), or went.
    func ownerChanged(_ message: OpaquePointer?) {
        guard DBusMessage.readString(message) != nil, DBusMessage.readString(message) != nil,
            let new = DBusMessage.readString(message), !new.isEmpty, let bus = sd_bus_message_get_bus(message)
        else { return }
        // A new logind: ask again, and take what is not held.
        _ = askDelayMax(bus)
    }

    /// `Inhibit(what, who, why, "delay")`.
    func inhibit(_ what: Inhibition, on bus: OpaquePointer) -> Int32 {
        let answered: sd_bus_message_handler_t = switch what {
        case .sleep: { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().inhibitorAnswered(.sleep, reply)
            return 0
        }
        case .shutdown: { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().inhibitorAnswered(.shutdown, reply)
            return 0
        }
        }
        return call(bus, "Inhibit", [what.rawValue, who, what.why, "delay"].map { .string($0) }, answered)
    }
}

import CAppHostShims
import CSystemd

/// The daemon's one D-Bus server on its bus: LogControl1's vtable and, for the daemon, Host1's,
/// put on each new connection, and the well-known name; on the loop's thread only.
final class HostDBusServer: @unchecked Sendable {
    /// What the service logs.
    enum Report: Sendable {
        /// The name is owned (again: after a lost bus).
        case owned(again: Bool)
        /// Log control cannot be had; it ends.
        case unavailable(String)
        /// The bus went away; a new connection follows.
        case lost(String)
        /// A new connection failed; the next try is after the duration.
        case retrying(String, Duration)
    }

    let busName: String
    let properties: LogControlProperties
    /// Host1, when served.
    let host: HostDBusObject?
    let reports: AsyncStream<Report>.Continuation
    /// Its place on the connection; set before it joins.
    weak var member: DBusConnection.Member?
    private var wasOwned = false
    /// What it added to the current connection: the vtable and the pending RequestName.
    private var slots: [OpaquePointer] = []
    /// Whether it left the connection: a late answer to RequestName is not for it.
    private var hasLeft = false

    init(busName: String, properties: LogControlProperties, host: HostDBusObject? = nil, reports: AsyncStream<Report>.Continuation) {
        self.busName = busName
        self.properties = properties
        self.host = host
        self.reports = reports
    }

    /// The vtable, then the name (asked without waiting: its answer comes on the loop).
    func setUp(_ bus: OpaquePointer) -> Int32 {
        dropSlots()
        var slot: UnsafeMutableRawPointer?
        let context = Unmanaged.passUnretained(properties).toOpaque()
        var result = apphost_log_control_add(UnsafeMutableRawPointer(bus), &slot, context, { context, property in
            Unmanaged<LogControlProperties>.fromOpaque(context!).takeUnretainedValue().value(of: String(cString: property!))
        }, { context, property, value in
            Unmanaged<LogControlProperties>.fromOpaque(context!).takeUnretainedValue().set(String(cString: property!), to: String(cString: value!))
        })
        guard result >= 0 else { return result }
        slots.append(OpaquePointer(slot!))
        if let host {
            result = host.setUp(bus)
            guard result >= 0 else { return result }
        }
        var request: OpaquePointer?
        result = sd_bus_request_name_async(bus, &request, busName, 0, { reply, userdata, _ in
            Unmanaged<HostDBusServer>.fromOpaque(userdata!).takeUnretainedValue().nameAnswered(reply)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
        if let request { slots.append(request) }
        return result
    }

    /// Leaves a connection that others keep (logind's client): the objects go, and the name.
    func leave(_ bus: OpaquePointer?) {
        hasLeft = true
        dropSlots()
        host?.leave()
        // A handler of its own: sd-bus's default one closes the connection on an error reply,
        // and the connection is not this server's alone.
        // Also a name still asked for: the bus answers RequestName, then this.
        if let bus, sd_bus_is_open(bus) > 0 { _ = sd_bus_release_name_async(bus, nil, busName, { _, _, _ in 1 }, nil) }
    }

    private func dropSlots() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
    }

    private func nameAnswered(_ reply: OpaquePointer?) {
        guard !hasLeft else { return }
        // A connection that went away fails its pending calls first; its Disconnected says why.
        if DBusMessage.isFromClosedBus(reply) { return }
        if let (name, message) = DBusMessage.error(of: reply) {
            if name == "org.freedesktop.DBus.Error.AccessDenied" {
                refuse("the name \(busName) is not ours (\(name): \(message); a D-Bus policy must let this user own it, as deploy/dbus/org.apphost.apphostd.conf does for the shipped unit)")
            } else {
                refuse("the name \(busName) is not ours (\(name): \(message))")
            }
            return
        }
        var code: UInt32 = 0
        guard sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "u")), &code) >= 0 else {
            refuse("the bus's answer to RequestName could not be read")
            return
        }
        switch code {
        case 1, 4:
            reports.yield(.owned(again: wasOwned))
            wasOwned = true
            member?.markEstablished()
        case 3:
            refuse("another process owns \(busName)")
        default:
            refuse("the name \(busName) is not ours (RequestName answered \(code))")
        }
    }

    private func refuse(_ reason: String) {
        // After a reconnect a refusal is as final as at start: said once, and log control ends.
        reports.yield(.unavailable(reason))
    }

    func connectionChanged(_ event: DBusConnection.Event) {
        switch event {
        case .lost(let reason):
            reports.yield(.lost(reason))
        case .endedBeforeEstablished(let reason):
            // dbus-daemon drops a connection whose uid it cannot resolve: a DynamicUser=.
            reports.yield(.unavailable("\(reason) before log control was set up (dbus-daemon does that to a DynamicUser='s connection, whose uid it cannot resolve: run as a system user, as the shipped unit does)"))
        case .reconnectFailed(let reason, let wait):
            reports.yield(.retrying(reason, wait))
        case .gaveUp(let reason):
            reports.yield(.unavailable(reason))
        }
    }
}

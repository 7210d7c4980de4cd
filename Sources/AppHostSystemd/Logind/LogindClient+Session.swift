import CSystemd
import Glibc

// The screen lock of one logind session: which session (`LogindEdge.WatchedSession`), found
// again whenever sessions come and go or seat0 switches, and its `Lock`, `Unlock` and
// `LockedHint`. Every call is asynchronous: the loop never waits for logind.
extension LogindClient {
    static let sessionInterface = "org.freedesktop.login1.Session"
    static let seat0 = "/org/freedesktop/login1/seat/seat0"

    /// `SessionNew`, `SessionRemoved` and seat0's `PropertiesChanged` (its active session): the
    /// session to follow may have changed. A `User`'s `Display` has no change signal of its own.
    func followSessionChanges(_ bus: OpaquePointer) -> Int32 {
        guard watched != nil else { return 0 }
        let changed: sd_bus_message_handler_t = { _, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().resolveSession()
            return 0
        }
        for member in ["SessionNew", "SessionRemoved"] {
            let result = match(bus, Self.path, Self.manager, member, changed)
            guard result >= 0 else { return result }
        }
        return match(bus, Self.seat0, "org.freedesktop.DBus.Properties", "PropertiesChanged") { message, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().seatPropertiesChanged(message)
            return 0
        }
    }

    /// seat0's `PropertiesChanged`: only a change of `ActiveSession` (seat0 switched users)
    /// matters, not its frequent `IdleHint`.
    private func seatPropertiesChanged(_ message: OpaquePointer?) {
        guard DBusMessage.readString(message) != nil,
            sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}") >= 0
        else { return }
        var names: [String] = []
        while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv") > 0 {
            guard let key = DBusMessage.readString(message),
                sd_bus_message_skip(message, "v") >= 0, sd_bus_message_exit_container(message) >= 0
            else { return }
            names.append(key)
        }
        guard sd_bus_message_exit_container(message) >= 0 else { return }
        if sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "s") >= 0 {
            while let name = DBusMessage.readString(message) { names.append(name) }
        }
        if names.contains("ActiveSession") { resolveSession() }
    }

    /// Finds the session to follow, then follows it.
    func resolveSession() {
        guard let watched, let bus else { return }
        switch watched {
        case .id(let id):
            _ = call(bus, "GetSession", [.string(id)]) { reply, userdata, _ in
                Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().sessionPathAnswered(reply, what: "no session")
                return 0
            }
        case .user(let name):
            // Looked up by the Swift side, once: NSS may ask the network, never on this thread.
            guard let uid = watchedUser else {
                events.yield(.noSession(reason: "no user \(name) on this machine"))
                return
            }
            askUser(bus, uid: uid)
        case .auto:
            if runsAsUserUnit {
                // Its own user's display session.
                askUser(bus, uid: getuid())
            } else {
                _ = getProperty(bus, Self.seat0, "org.freedesktop.login1.Seat", "ActiveSession") { reply, userdata, _ in
                    Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().sessionStructAnswered(reply, what: "no active session on seat0")
                    return 0
                }
            }
        }
    }

    private func askUser(_ bus: OpaquePointer, uid: uid_t) {
        _ = call(bus, "GetUser", [.uint32(UInt32(uid))]) { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().userAnswered(reply)
            return 0
        }
    }

    private func userAnswered(_ reply: OpaquePointer?) {
        guard let bus, let path = objectPath(reply, what: "that user has no session") else { return }
        _ = getProperty(bus, path, "org.freedesktop.login1.User", "Display") { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().displayAnswered(reply)
            return 0
        }
        pendingUser = path
    }

    /// The user's `Display`; without one, their newest session (the last of `Sessions`).
    private func displayAnswered(_ reply: OpaquePointer?) {
        guard let bus, let userPath = pendingUser, isAnswer(reply) else { return }
        if let path = sessionStruct(reply), path != "/" {
            follow(path)
            return
        }
        _ = getProperty(bus, userPath, "org.freedesktop.login1.User", "Sessions") { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().sessionsAnswered(reply)
            return 0
        }
    }

    /// The user's sessions, newest first (logind adds each at the head of the list).
    private func sessionsAnswered(_ reply: OpaquePointer?) {
        // An error (a timeout, logind restarting) says nothing about the sessions: the one
        // followed stays followed.
        guard isAnswer(reply),
            sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "a(so)") >= 0,
            sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "a")), "(so)") >= 0
        else { return }
        if let path = sessionStructPath(reply) {
            follow(path)
        } else {
            unfollow("that user has no session")
        }
    }

    private func sessionStructAnswered(_ reply: OpaquePointer?, what: String) {
        guard isAnswer(reply), let path = sessionStruct(reply) else { return }
        if path != "/" { follow(path) } else { unfollow(what) }
    }

    /// A reply that is an answer, not an error nor the closing bus's synthetic one.
    private func isAnswer(_ reply: OpaquePointer?) -> Bool {
        if DBusMessage.isFromClosedBus(reply) { return false }
        return DBusMessage.error(of: reply) == nil
    }

    private func sessionPathAnswered(_ reply: OpaquePointer?, what: String) {
        if let path = objectPath(reply, what: what) { follow(path) }
    }

    /// A `(so)` property's path (`Display`, `ActiveSession`), from an answer.
    private func sessionStruct(_ reply: OpaquePointer?) -> String? {
        guard sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "(so)") >= 0 else { return nil }
        return sessionStructPath(reply)
    }

    /// The path of the session struct `(so)` (id, path) at the message's position.
    private func sessionStructPath(_ message: OpaquePointer?) -> String? {
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "r")), "so") > 0,
            DBusMessage.readString(message) != nil
        else { return nil }
        return DBusMessage.readString(message, type: UInt8(ascii: "o"))
    }

    /// A method's `o` answer, or nil: after saying why there is no session when logind said
    /// there is none (`NoSuchSession`, `NoSuchUser`); any other error changes nothing.
    private func objectPath(_ reply: OpaquePointer?, what: String) -> String? {
        if DBusMessage.isFromClosedBus(reply) { return nil }
        if let (name, message) = DBusMessage.error(of: reply) {
            if name.hasPrefix("org.freedesktop.login1.NoSuch") { unfollow("\(what): \(message)") }
            return nil
        }
        guard let path = DBusMessage.readString(reply, type: UInt8(ascii: "o")) else {
            unfollow(what)
            return nil
        }
        return path
    }

    // MARK: Following one session

    /// Follows the session at `path` (nothing to do when it is the one followed): its `Lock`,
    /// `Unlock` and `LockedHint`, then its id and current `LockedHint`.
    private func follow(_ path: String) {
        guard let bus, session?.path != path else { return }
        for slot in session?.slots ?? [] { sd_bus_slot_unref(slot) }
        session = nil
        var slots: [OpaquePointer] = []
        let lock: sd_bus_message_handler_t = { _, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().screenChanged(locked: true)
            return 0
        }
        let unlock: sd_bus_message_handler_t = { _, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().screenChanged(locked: false)
            return 0
        }
        let properties: sd_bus_message_handler_t = { message, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().sessionPropertiesChanged(message)
            return 0
        }
        for (interface, member, handler) in [(Self.sessionInterface, "Lock", lock), (Self.sessionInterface, "Unlock", unlock), ("org.freedesktop.DBus.Properties", "PropertiesChanged", properties)] {
            var slot: OpaquePointer?
            guard sd_bus_match_signal_async(bus, &slot, Self.destination, path, interface, member, handler, Self.sessionMatchInstalled, context) >= 0, let slot else { continue }
            slots.append(slot)
        }
        session = (path, "", slots)
        _ = getProperty(bus, path, Self.sessionInterface, "Id") { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().sessionIDAnswered(reply)
            return 0
        }
    }

    /// The bus's answer to a session's AddMatch; a handler of its own, as `matchInstalled`.
    static let sessionMatchInstalled: sd_bus_message_handler_t = { reply, userdata, _ in
        let client = Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue()
        if !client.isFinished, let (name, message) = DBusMessage.error(of: reply) {
            // Fails closed: the screen rule keeps its last word.
            client.events.yield(.noSession(reason: "the bus refused to pass on the session's signals (\(name): \(message))"))
        }
        return 0
    }

    private func sessionIDAnswered(_ reply: OpaquePointer?) {
        guard let bus, let current = session, DBusMessage.error(of: reply) == nil,
            sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "s") >= 0,
            let id = DBusMessage.readString(reply)
        else { return }
        session = (current.path, id, current.slots)
        events.yield(.watching(session: id))
        _ = getProperty(bus, current.path, Self.sessionInterface, "LockedHint") { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().lockedHintAnswered(reply)
            return 0
        }
    }

    private func lockedHintAnswered(_ reply: OpaquePointer?) {
        var hint: Int32 = 0
        guard DBusMessage.error(of: reply) == nil, sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "b") >= 0,
            sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "b")), &hint) >= 0
        else { return }
        screenChanged(locked: hint != 0)
    }

    /// `PropertiesChanged(Session, {LockedHint: b, …}, …)`.
    private func sessionPropertiesChanged(_ message: OpaquePointer?) {
        guard DBusMessage.readString(message) == Self.sessionInterface,
            sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "{sv}") >= 0
        else { return }
        while sd_bus_message_enter_container(message, CChar(UInt8(ascii: "e")), "sv") > 0 {
            guard let key = DBusMessage.readString(message) else { return }
            if key == "LockedHint" {
                var hint: Int32 = 0
                guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "v")), "b") >= 0,
                    sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &hint) >= 0
                else { return }
                screenChanged(locked: hint != 0)
                return
            }
            guard sd_bus_message_skip(message, "v") >= 0, sd_bus_message_exit_container(message) >= 0 else { return }
        }
    }

    private func screenChanged(locked: Bool) {
        guard let session, !session.id.isEmpty else { return }
        events.yield(.screen(locked: locked, session: session.id))
    }

    private func unfollow(_ reason: String) {
        for slot in session?.slots ?? [] { sd_bus_slot_unref(slot) }
        session = nil
        events.yield(.noSession(reason: reason))
    }

    // MARK: Calls

    /// `Get(interface, name)` on `path`.
    private func getProperty(_ bus: OpaquePointer, _ path: String, _ interface: String, _ name: String, _ answered: sd_bus_message_handler_t) -> Int32 {
        call(bus, path: path, interface: "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)], answered)
    }

    /// The uid of user `name`, from the passwd database.
    static func uid(of name: String) -> uid_t? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else { return nil }
        return entry.pw_uid
    }
}

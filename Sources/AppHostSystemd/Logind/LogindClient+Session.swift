import AppHostSupport
import CSystemd
import Glibc

// The screen lock of one logind session: which session (`LogindEdge.WatchedSession`), found by
// sd-login and again whenever its monitor says logind's files changed (sessions come and go,
// seat0 switches), and the session's `Lock`, `Unlock` and `LockedHint`, which only D-Bus
// carries. Every bus call is asynchronous: the loop never waits for logind.
extension LogindClient {
    static let sessionInterface = "org.freedesktop.login1.Session"

    /// sd-login's monitor of the files that decide the session to follow, on the loop; once,
    /// for the client's life (it outlives a bus connection). Without it, the session found at
    /// start stays the one followed, and the log says why.
    func followSessionChanges(_ event: OpaquePointer) {
        guard let watched, loginMonitor == nil, !loginMonitorFailed, !isFinished else { return }
        let category = LoginSessionLookup.monitorCategory(for: watched, runsAsUserUnit: runsAsUserUnit)
        var monitor: OpaquePointer?
        var result = sd_login_monitor_new(category, &monitor)
        guard result >= 0, let monitor else {
            loginMonitorFailed = true
            events.yield(.sessionsNotFollowed(reason: "sd_login_monitor_new(\(category)): \(SystemErrorText.describe(-result))"))
            return
        }
        var source: OpaquePointer?
        result = sd_event_add_io(event, &source, sd_login_monitor_get_fd(monitor), UInt32(sd_login_monitor_get_events(monitor)), { _, _, _, userdata in
            let client = Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue()
            client.loginFilesChanged()
            return 0
        }, context)
        guard result >= 0, let source else {
            sd_login_monitor_unref(monitor)
            loginMonitorFailed = true
            events.yield(.sessionsNotFollowed(reason: "sd_event_add_io: \(SystemErrorText.describe(-result))"))
            return
        }
        loginMonitor = (monitor, source)
    }

    /// logind rewrote one of the files the monitor watches: the session may have changed.
    private func loginFilesChanged() {
        if let monitor = loginMonitor?.monitor { sd_login_monitor_flush(monitor) }
        resolveSession()
    }

    /// Finds the session to follow, then follows it (or says why there is none).
    func resolveSession() {
        guard let watched, bus != nil else { return }
        switch sessionLookup.session(for: watched, user: watchedUser, runsAsUserUnit: runsAsUserUnit) {
        case .success(let id): follow(id)
        case .failure(let none): if session != nil || !saidNoSession { unfollow(none.reason) }
        }
    }

    /// Asks the followed session's `LockedHint` again.
    func refreshLockedHint() {
        guard let bus, let current = session else { return }
        _ = getProperty(bus, current.path, Self.sessionInterface, "LockedHint") { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().lockedHintAnswered(reply)
            return 0
        }
    }

    /// The bus's answer to a Get: an answer, not an error nor the closing bus's synthetic one.
    private func isAnswer(_ reply: OpaquePointer?) -> Bool {
        if DBusMessage.isFromClosedBus(reply) { return false }
        return DBusMessage.error(of: reply) == nil
    }

    // MARK: Following one session

    /// Follows session `id` (nothing to do when it is the one followed): its `Lock`, `Unlock`
    /// and `LockedHint` at its object path (`sd_bus_path_encode` of its id, as logind names it),
    /// then its current `LockedHint`.
    private func follow(_ id: String) {
        guard let bus, session?.id != id else { return }
        var encoded: UnsafeMutablePointer<CChar>?
        guard sd_bus_path_encode("/org/freedesktop/login1/session", id, &encoded) >= 0, let encoded else { return }
        let path = String(cString: encoded)
        free(encoded)
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
        session = (path, id, slots)
        saidNoSession = false
        events.yield(.watching(session: id))
        _ = getProperty(bus, path, Self.sessionInterface, "LockedHint") { reply, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().lockedHintAnswered(reply)
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

    private func lockedHintAnswered(_ reply: OpaquePointer?) {
        var hint: Int32 = 0
        guard isAnswer(reply), sd_bus_message_enter_container(reply, CChar(UInt8(ascii: "v")), "b") >= 0,
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
        saidNoSession = true
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

import AppHostSupport
import CSystemd
import Glibc

/// One sd-bus connection on the edge's event loop (`sd_bus_attach_event`) that comes back by
/// itself when the bus goes away, as after `systemctl restart dbus`.
///
/// sd-bus speaks the protocol: authentication, the messages, the checks. This only keeps the
/// connection: it opens it (`sd_bus_open`'s choice of bus, or a given address), has each of its
/// members add what it serves or follows (`Member.setUp`: vtables, the name, matches), and on
/// `org.freedesktop.DBus.Local.Disconnected` builds all of it again on a new connection to the
/// same address, with `sd_bus_set_watch_bind` so that a bus socket not yet back is waited for
/// without a timer. A connection that fails to come up is tried again after 100 ms, doubling up
/// to 30 s: the only timer, and only while a reconnect is pending. The daemon's edges share one
/// connection per bus (`join`); one that leaves takes back what it added, and the last closes
/// it. Touched on the loop's thread only.
package final class DBusConnection: EdgeEventClient, @unchecked Sendable {
    /// One party on the connection: what it adds to each new connection, what it is told, and
    /// how it takes back what it added when it leaves a connection that others keep.
    package final class Member: @unchecked Sendable {
        let setUp: (OpaquePointer) -> Int32
        let onEvent: (Event) -> Void
        let leave: (OpaquePointer?) -> Void
        /// The connection it is on, once it joined (on the loop's thread).
        fileprivate(set) weak var connection: DBusConnection?

        /// `setUp` returns 0 or a negative errno; `leave` gets the open connection, or nil.
        package init(setUp: @escaping (OpaquePointer) -> Int32, onEvent: @escaping (Event) -> Void, leave: @escaping (OpaquePointer?) -> Void) {
            self.setUp = setUp
            self.onEvent = onEvent
            self.leave = leave
        }

        /// The member has the connection working (its name owned, an answer had): see
        /// `DBusConnection.markEstablished`.
        package func markEstablished() {
            connection?.markEstablished()
        }
    }

    let requested: DBusAddress
    /// Who is on it. Their objects, whose addresses sd-bus holds, live as long as they do.
    private var members: [Member]
    /// Those that left while this connection was open: sd-bus may still answer their pending
    /// calls into them, so they live until it closes.
    private var former: [Member] = []
    /// The loop it is on; a connection of its own loop (`endsLoop`) ends it.
    private let loop: EdgeEventLoop?
    private let endsLoop: Bool
    /// `sd_bus_get_scope` of the first connection: `system` or `user` for a bus sd-bus chose.
    package private(set) var scope: String?
    /// A bus opened already (to learn its scope): the first connection.
    private var opened: OpaquePointer?
    /// Takes it out of the loop's shared connections: it can no longer be joined.
    var unregister: () -> Void = {}
    /// The connection, while there is one.
    package private(set) var bus: OpaquePointer?
    /// The address the first connection reached: where every new one goes.
    package private(set) var address: String?
    private var event: OpaquePointer?
    private var retry: OpaquePointer?
    private var delay = DBusConnection.firstDelay
    private var established = false
    /// Whether any connection was ever established: a drop after that is always a reconnect.
    private var everEstablished = false
    /// When the owner last had a connection working: a connection that stays up for
    /// `maximumDelay` starts the backoff over; one that keeps dropping keeps doubling it.
    private var establishedAt = ContinuousClock.now
    /// The first connection was to a user's bus, which sd-bus trusts (`sd_bus_open`): the new
    /// ones are trusted too, so their callers' privilege is not asked of the bus.
    private var trustsUserBus = false
    private var isFinished = false

    static let firstDelay = Duration.milliseconds(100)
    static let maximumDelay = Duration.seconds(30)

    init(_ requested: DBusAddress, on loop: EdgeEventLoop?, endsLoop: Bool, member: Member, opened: OpaquePointer? = nil) {
        self.requested = requested
        self.loop = loop
        self.endsLoop = endsLoop
        self.members = [member]
        self.opened = opened
        member.connection = self
    }

    /// Whether a new member may join: not finished, and not ended for good.
    var isJoinable: Bool { !isFinished && !hasEnded }
    private var hasEnded = false

    /// Opens the first connection. Its failure is the add's (`EdgeEventLoop.add` throws it).
    package func attach(to event: OpaquePointer) -> Int32 {
        self.event = event
        let result = connect()
        return result < 0 ? -result : 0
    }

    /// The owner has the connection working (its name is owned): the next loss is a loss, and
    /// the backoff starts over.
    package func markEstablished() {
        established = true
        everEstablished = true
        establishedAt = .now
    }

    /// Adds `member`, set up at once on the open connection: 0 or a negative errno (it is then
    /// not on it).
    func add(_ member: Member) -> Int32 {
        // A connection that went away and waits for its reconnect: the next one sets it up.
        if let bus, sd_bus_is_open(bus) > 0, retry == nil {
            let result = member.setUp(bus)
            guard result >= 0 else {
                member.leave(bus)
                former.append(member)
                return result
            }
        }
        members.append(member)
        member.connection = self
        return 0
    }

    /// Takes `member` off: it takes back what it added; the last one closes the connection.
    package func leave(_ member: Member) {
        guard let index = members.firstIndex(where: { $0 === member }) else { return }
        members.remove(at: index)
        member.connection = nil
        member.leave(bus)
        if bus != nil { former.append(member) }
        if members.isEmpty {
            unregister()
            if let loop { loop.remove(self) } else { finish() }
        }
    }

    package func finish() {
        guard !isFinished else { return }
        isFinished = true
        unregister()
        if let retry { sd_event_source_disable_unref(retry) }
        retry = nil
        if let opened { sd_bus_close_unref(opened) }
        opened = nil
        closeBus()
        let left = members
        members = []
        for member in left { member.leave(nil) }
        if endsLoop { loop?.close() }
    }

    /// Tells every member, in the order they joined.
    private func tell(_ event: Event) {
        for member in members { member.onEvent(event) }
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// A new connection with the owner's objects on it: 0 or a negative errno.
    private func connect() -> Int32 {
        var made: OpaquePointer?
        var result: Int32
        if let opened {
            (made, result) = (opened, 0)
            self.opened = nil
        } else if address == nil, requested == .default {
            result = sd_bus_open(&made)
        } else if address == nil, requested == .system {
            result = sd_bus_open_system(&made)
        } else if address == nil, requested == .user {
            result = sd_bus_open_user(&made)
        } else {
            result = sd_bus_new(&made)
            let target: String = switch requested {
            case .address(let text): address ?? text
            case .default, .system, .user: address ?? ""
            }
            if result >= 0 { result = sd_bus_set_address(made, target) }
            if result >= 0 { result = sd_bus_set_bus_client(made, 1) }
            // A reconnect waits for the socket to come back instead of failing at once.
            if result >= 0, address != nil { result = sd_bus_set_watch_bind(made, 1) }
            if result >= 0, address != nil, trustsUserBus { result = sd_bus_set_trusted(made, 1) }
            if result >= 0 { result = sd_bus_start(made) }
        }
        guard result >= 0, let made else {
            if let made { sd_bus_unref(made) }
            return result < 0 ? result : -EINVAL
        }
        if address == nil {
            var text: UnsafePointer<CChar>?
            if sd_bus_get_address(made, &text) >= 0, let text { address = String(cString: text) }
            scope = Self.scope(of: made)
            trustsUserBus = (requested == .default || requested == .user) && scope == "user"
        }
        result = sd_bus_attach_event(made, event, 0)
        if result >= 0 {
            result = sd_bus_add_filter(made, nil, { message, userdata, _ in
                if sd_bus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") > 0 {
                    Unmanaged<DBusConnection>.fromOpaque(userdata!).takeUnretainedValue().disconnected()
                }
                return 0
            }, context)
        }
        for member in members where result >= 0 { result = member.setUp(made) }
        guard result >= 0 else {
            sd_bus_close_unref(made)
            return result
        }
        bus = made
        return 0
    }

    /// `system` or `user` for a bus sd-bus chose; nil for one at an address.
    static func scope(of bus: OpaquePointer) -> String? {
        var scope: UnsafePointer<CChar>?
        return sd_bus_get_scope(bus, &scope) >= 0 ? scope.map { String(cString: $0) } : nil
    }

    /// Closes without flushing: a flush waits for a bus that may never answer, on the edge's
    /// thread (the signals' and memory pressure's too).
    private func closeBus() {
        if let bus { sd_bus_close_unref(bus) }
        bus = nil
        former = []
    }

    /// In sd-bus's dispatch of this connection: the rest waits for the loop's next turn.
    private func disconnected() {
        guard !isFinished, retry == nil else { return }
        let reason = "the bus closed the connection"
        if established {
            established = false
            // A connection that stayed up a while starts the backoff over.
            if ContinuousClock.now - establishedAt >= Self.maximumDelay { delay = Self.firstDelay }
            tell(.lost(reason: reason))
            schedule(after: nextWait())
        } else if everEstablished {
            let wait = nextWait()
            tell(.reconnectFailed(reason: reason, retryIn: wait))
            schedule(after: wait)
        } else {
            // No new connection follows: one who joins now needs a connection of its own.
            hasEnded = true
            unregister()
            tell(.endedBeforeEstablished(reason: reason))
        }
    }

    /// The current delay with a little jitter (so that a fleet of daemons does not knock on a
    /// restarted bus at once); the next is twice as long, up to `maximumDelay`.
    private func nextWait() -> Duration {
        let wait = delay
        delay = min(delay * 2, Self.maximumDelay)
        return wait + .milliseconds(Int.random(in: 0...Int(wait.wholeMicroseconds / 10_000)))
    }

    private func schedule(after wait: Duration) {
        guard let event else { return }
        var source: OpaquePointer?
        let result = sd_event_add_time_relative(event, &source, CLOCK_MONOTONIC, wait.wholeMicroseconds, 0, { source, _, userdata in
            sd_event_source_unref(source)
            Unmanaged<DBusConnection>.fromOpaque(userdata!).takeUnretainedValue().reconnect()
            return 0
        }, context)
        guard result >= 0, let source else {
            retry = nil
            hasEnded = true
            unregister()
            tell(.gaveUp(reason: "no timer for the next try: \(SystemErrorText.describe(-result))"))
            return
        }
        retry = source
    }

    private func reconnect() {
        retry = nil
        guard !isFinished else { return }
        closeBus()
        let result = connect()
        guard result < 0 else { return }
        let wait = nextWait()
        tell(.reconnectFailed(reason: SystemErrorText.describe(-result), retryIn: wait))
        schedule(after: wait)
    }
}

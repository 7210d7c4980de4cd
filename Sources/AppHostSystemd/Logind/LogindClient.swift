import AppHostSupport
import CSystemd
import Glibc

/// logind as the daemon follows it, on the edge's loop thread and one system-bus connection:
/// its `PrepareForSleep` and `PrepareForShutdown` signals, and a `delay` inhibitor for each,
/// whose fd it closes when the Swift side says the services are ready, or at the latest a margin
/// before logind's `InhibitDelayMaxUSec`, whatever the services do.
///
/// When logind is not on the bus (yet: the unit starts after `local-fs.target` only), it follows
/// `NameOwnerChanged` and takes the inhibitors when logind appears. Touched on the loop's thread
/// only; the Swift side reaches it through `EdgeEventLoop.perform`.
final class LogindClient: @unchecked Sendable {
    /// What the daemon asks logind to delay.
    enum Inhibition: String, Sendable, CaseIterable {
        case sleep, shutdown

        /// What `systemd-inhibit --list` shows as the reason.
        var why: String {
            switch self {
            case .sleep: "saves its services' state before the machine sleeps"
            case .shutdown: "saves its services' state before the machine shuts down"
            }
        }
    }

    /// What happened, for the Swift side.
    enum Event: Sendable {
        /// logind answered; it waits up to `delayMax` for delay inhibitors.
        case logindFound(delayMax: Duration)
        /// logind is not on the bus: the inhibitors are taken once it appears.
        case logindMissing(reason: String)
        case inhibitorTaken(Inhibition)
        /// logind refused the inhibitor; `accessDenied` when polkit said no or was not there.
        case inhibitorRefused(Inhibition, reason: String, accessDenied: Bool)
        /// `PrepareForSleep(starting)` or `PrepareForShutdown(starting)`, as the loop received it
        /// (`at`); a start carries its number, for its release.
        case prepare(Inhibition, starting: Bool, number: Int, at: ContinuousClock.Instant)
        /// No system bus: nothing of logind is followed.
        case unavailable(reason: String)
        /// The system bus went away; a new connection follows.
        case lost(reason: String)
        /// The screen lock of this session is followed now.
        case watching(session: String)
        /// No session to follow (none of that user, none active on seat0).
        case noSession(reason: String)
        /// sd-login's monitor could not be had: the session found at start stays the one
        /// followed.
        case sessionsNotFollowed(reason: String)
        /// The followed session's screen locked or unlocked (`Lock`, `Unlock`, `LockedHint`).
        case screen(locked: Bool, session: String)
    }

    static let destination = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"

    let who: String
    let events: AsyncStream<Event>.Continuation
    /// Called on the loop's thread when the deadline released an inhibitor the Swift side had
    /// not: with how long logind had been waiting. It names the service still inside a hook.
    let deadlinePassed: @Sendable (Inhibition, Duration) -> Void
    /// Its place on the system-bus connection (the daemon's, when its bus name is there too);
    /// set before it joins.
    weak var member: DBusConnection.Member?
    /// Its matches on the current connection: taken off when it leaves a connection that the
    /// daemon's bus name keeps.
    var matches: [OpaquePointer] = []
    /// The bus refused one of its matches: nothing is held on this connection.
    var cannotFollow = false

    /// How long logind waits for delay inhibitors; 5 s (its default) until it said.
    private(set) var delayMax = Duration.seconds(5)

    func setDelayMax(_ value: Duration) {
        delayMax = value
    }
    /// The inhibitors held: their fds, close-on-exec.
    private var held: [Inhibition: Int32] = [:]
    private var asking: Set<Inhibition> = []
    /// While logind waits for an inhibitor: since when, and the timer that releases it.
    private var waiting: [Inhibition: (number: Int, since: ContinuousClock.Instant, timer: OpaquePointer?)] = [:]
    /// The last preparation's number: a release names the one it ends.
    private var preparations = 0
    private(set) var bus: OpaquePointer?
    private(set) var isFinished = false
    /// Whose screen lock is followed; nil: none.
    let watched: LogindEdge.WatchedSession?
    /// The session followed now: its object path and id, and the matches on it.
    var session: (path: String, id: String, slots: [OpaquePointer])?
    /// Whether the client said there is no session since it last followed one: sd-login's
    /// monitor wakes on every rewrite of logind's files, and the log says it once.
    var saidNoSession = false
    /// sd-login's monitor and its source on the loop, once made.
    var loginMonitor: (monitor: OpaquePointer, source: OpaquePointer)?
    /// The monitor could not be had: said once, not tried again.
    var loginMonitorFailed = false
    /// How sessions are found: sd-login, or the tests' own.
    let sessionLookup: LoginSessionLookup

    /// The uid of `watched`'s `user:NAME`, looked up by the Swift side; nil: no such user.
    let watchedUser: uid_t?
    /// Whether the daemon runs as a user unit (`auto` follows its own user's display session
    /// then), read once by the Swift side.
    let runsAsUserUnit: Bool

    init(
        who: String, watching watched: LogindEdge.WatchedSession?, sessionLookup: LoginSessionLookup = .sdLogin, events: AsyncStream<Event>.Continuation,
        deadlinePassed: @escaping @Sendable (Inhibition, Duration) -> Void
    ) {
        self.watched = watched
        self.sessionLookup = sessionLookup
        if case .user(let name) = watched { watchedUser = Self.uid(of: name) } else { watchedUser = nil }
        var unit: UnsafeMutablePointer<CChar>?
        runsAsUserUnit = sd_pid_get_user_unit(0, &unit) >= 0
        free(unit)
        self.who = who
        self.events = events
        self.deadlinePassed = deadlinePassed
    }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// When the inhibitor is released at the latest: a margin before logind gives up on it, so
    /// that logind never reaches its timeout on the daemon's account.
    var releaseAfter: Duration {
        delayMax - min(delayMax / 4, .milliseconds(500))
    }

    // MARK: The connection

    /// On each new connection: the signals, logind's comings and goings, then logind itself.
    func setUp(_ bus: OpaquePointer) -> Int32 {
        // Set once everything is added: a failed set-up closes this bus, which must not stay here.
        self.bus = nil
        // The matches on the old connection go with it.
        leave()
        cannotFollow = false
        var result = match(bus, Self.path, Self.manager, "PrepareForSleep") { message, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().prepare(.sleep, message)
            return 0
        }
        guard result >= 0 else { return result }
        result = match(bus, Self.path, Self.manager, "PrepareForShutdown") { message, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().prepare(.shutdown, message)
            return 0
        }
        guard result >= 0 else { return result }
        let owner = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.destination)'"
        var slot: OpaquePointer?
        result = sd_bus_add_match_async(bus, &slot, owner, { message, userdata, _ in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().ownerChanged(message)
            return 0
        }, Self.matchInstalled, context)
        guard result >= 0 else { return result }
        if let slot { matches.append(slot) }
        result = askDelayMax(bus)
        guard result >= 0 else { return result }
        self.bus = bus
        return 0
    }

    /// What became of the system-bus connection.
    func connectionChanged(_ event: DBusConnection.Event) {
        switch event {
        case .lost(let reason):
            // Closed already; the next connection's set-up sets it again.
            bus = nil
            events.yield(.lost(reason: reason))
        case .endedBeforeEstablished(let reason), .gaveUp(let reason):
            // No bus to answer logind's PrepareFor… on: an inhibitor held now would only make
            // every sleep wait for logind's limit.
            bus = nil
            for what in Inhibition.allCases { close(what) }
            events.yield(.unavailable(reason: reason))
        case .reconnectFailed:
            // A set-up that failed on another member closed the bus this one was set up on.
            bus = nil
        }
    }

    /// The daemon ends: the inhibitors go with it.
    func finish() {
        isFinished = true
        // No call nor match of its own after this: a late answer finds no bus.
        bus = nil
        for what in Inhibition.allCases { close(what) }
        leave()
        if let (monitor, source) = loginMonitor {
            sd_event_source_disable_unref(source)
            sd_login_monitor_unref(monitor)
        }
        loginMonitor = nil
        events.finish()
    }

    /// Takes its matches off the connection (they belong to an old one, or it leaves it).
    func leave() {
        for slot in matches + (session?.slots ?? []) { sd_bus_slot_unref(slot) }
        matches = []
        session = nil
    }

    // MARK: Inhibitors

    /// Closes the inhibitor's fd, once the services are ready (or the deadline passed): logind
    /// goes on at once. Returns how long logind had been waiting, when it was.
    ///
    /// Only while logind waits for it in preparation `number`: a release that comes after the
    /// deadline, after the sleep, or into the next sleep (a service that hung past all of them)
    /// leaves the inhibitor taken for the next time alone.
    @discardableResult
    func release(_ what: Inhibition, preparation number: Int) -> Duration? {
        guard let wait = waiting[what], wait.number == number else { return nil }
        close(what)
        return ContinuousClock.now - wait.since
    }

    /// Closes the inhibitor's fd and its deadline timer, whatever logind waits for.
    func close(_ what: Inhibition) {
        if let timer = waiting.removeValue(forKey: what)?.timer { sd_event_source_disable_unref(timer) }
        if let fd = held.removeValue(forKey: what) { Glibc.close(fd) }
    }

    /// Asks for each inhibitor not held nor asked for yet.
    func takeInhibitorsNow() {
        guard let bus, !isFinished, !cannotFollow else { return }
        for what in Inhibition.allCases where held[what] == nil && !asking.contains(what) {
            let result = inhibit(what, on: bus)
            if result < 0 {
                events.yield(.inhibitorRefused(what, reason: "the call could not be made: \(SystemErrorText.describe(-result))", accessDenied: false))
            } else {
                asking.insert(what)
            }
        }
    }

    func inhibitorAnswered(_ what: Inhibition, _ reply: OpaquePointer?) {
        asking.remove(what)
        if DBusMessage.isFromClosedBus(reply) { return }
        if let (name, message) = DBusMessage.error(of: reply) {
            // polkit said no, or is not there to ask (not installed, masked: logind passes on
            // its activation's error).
            let polkit = name == "org.freedesktop.DBus.Error.AccessDenied" || message.utf8.contains(sequence: "polkit".utf8) || message.utf8.contains(sequence: "PolicyKit".utf8)
            events.yield(.inhibitorRefused(what, reason: "\(name): \(message)", accessDenied: polkit))
            return
        }
        var fd: Int32 = -1
        guard sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "h")), &fd) >= 0, fd >= 0 else {
            events.yield(.inhibitorRefused(what, reason: "logind's answer held no fd", accessDenied: false))
            return
        }
        // The message owns its fd: a copy of our own, close-on-exec, so no exec'd child holds
        // the lock.
        let own = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard own >= 0 else {
            events.yield(.inhibitorRefused(what, reason: "cannot keep its fd: \(SystemErrorText.describe(errno))", accessDenied: false))
            return
        }
        if isFinished {
            Glibc.close(own)
            return
        }
        if let old = held.updateValue(own, forKey: what) { Glibc.close(old) }
        events.yield(.inhibitorTaken(what))
    }

    // MARK: logind's signals

    private func prepare(_ what: Inhibition, _ message: OpaquePointer?) {
        var starting: Int32 = 0
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "b")), &starting) >= 0 else { return }
        let now = ContinuousClock.now
        if starting != 0 {
            preparations += 1
            if !isFinished, held[what] != nil, waiting[what] == nil { waiting[what] = (preparations, now, armDeadline(what)) }
            events.yield(.prepare(what, starting: true, number: preparations, at: now))
        } else {
            // Awake again, or the shutdown was cancelled. logind no longer waits; an inhibitor
            // still held (released neither by the services nor the deadline: none armed) stays
            // for the next time, and a released one is taken again.
            if let timer = waiting.removeValue(forKey: what)?.timer { sd_event_source_disable_unref(timer) }
            takeInhibitorsNow()
            events.yield(.prepare(what, starting: false, number: preparations, at: now))
        }
    }

    /// The timer that releases the inhibitor at `releaseAfter`; nil when none could be had (the
    /// Swift side's release is then the only one).
    private func armDeadline(_ what: Inhibition) -> OpaquePointer? {
        guard let bus, !isFinished, let event = sd_bus_get_event(bus) else { return nil }
        var source: OpaquePointer?
        let handler: sd_event_time_handler_t = switch what {
        case .sleep: { _, _, userdata in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().deadline(.sleep)
            return 0
        }
        case .shutdown: { _, _, userdata in
            Unmanaged<LogindClient>.fromOpaque(userdata!).takeUnretainedValue().deadline(.shutdown)
            return 0
        }
        }
        let result = sd_event_add_time_relative(event, &source, CLOCK_MONOTONIC, releaseAfter.wholeMicroseconds, 0, handler, context)
        return result >= 0 ? source : nil
    }

    private func deadline(_ what: Inhibition) {
        guard let number = waiting[what]?.number, let waited = release(what, preparation: number) else { return }
        deadlinePassed(what, waited)
    }
}

import AppHostTestKit
import CSystemd
import Foundation
import Synchronization

/// A stand-in for systemd-logind on a test's bus, so that logind's client runs in `swift test`
/// without root: `org.freedesktop.login1` with the Manager's `InhibitDelayMaxUSec`, `Inhibit`
/// (one end of a socket pair, as logind hands out a FIFO's; its close is the release) and
/// `PrepareForSleep`, and one session (`c1`) with `Lock`, `Unlock` and `LockedHint`. sd-bus
/// blocks, so it serves on a thread of its own; the tests' calls are queued to it. The real
/// logind is the PID-1 suites'.
public final class TestLogind: Sendable {
    /// A delay inhibitor a client took.
    public struct Inhibitor: Sendable, Equatable, CustomStringConvertible {
        public let what: String
        public let who: String
        public let mode: String
        public var description: String { "\(what) by \(who) (\(mode))" }

        /// An inhibitor as given.
        public init(what: String, who: String, mode: String) {
            (self.what, self.who, self.mode) = (what, who, mode)
        }
    }

    /// A taken inhibitor's fd closed by its client, and when the fake saw it.
    public struct Release: Sendable {
        public let what: String
        public let at: ContinuousClock.Instant
    }

    /// What the tests ask of the server's thread.
    enum Action: Sendable {
        case prepareForSleep(Bool)
        case screen(locked: Bool)
        case restart
    }

    /// The session the fake serves.
    public static let sessionID = "c1"
    public static let sessionPath = "/org/freedesktop/login1/session/c1"

    /// Every inhibitor taken, in order.
    public let inhibitors = TestLog<Inhibitor>()
    /// Every release, in order.
    public let releases = TestLog<Release>()
    /// Each `Get(Manager, InhibitDelayMaxUSec)`: how a client learns logind is there.
    public let delayMaxQueries = TestLog<Int>()
    /// Each time the fake owns the name (again, after `restart()`).
    private let owned = TestLog<Int>()
    private let finished = TestLog<Bool>()
    private let isStopped = Atomic<Bool>(false)
    private let actions = Mutex<[Action]>([])
    private let lockedHint = Mutex(false)
    let delayMax: Duration
    let refusesInhibitors: Bool

    private init(delayMax: Duration, refusesInhibitors: Bool) {
        self.delayMax = delayMax
        self.refusesInhibitors = refusesInhibitors
    }

    /// Serves on the bus at `address` and returns once it owns `org.freedesktop.login1`.
    /// `refusingInhibitors`: `Inhibit` answers polkit's `AccessDenied`.
    public static func start(address: String, delayMax: Duration = .seconds(5), refusingInhibitors: Bool = false, timeout: Duration = .seconds(10)) async throws -> TestLogind {
        let logind = TestLogind(delayMax: delayMax, refusesInhibitors: refusingInhibitors)
        let thread = Thread { logind.serve(address: address) }
        thread.start()
        guard await logind.owned.first(timeout: timeout, where: { _ in true }) != nil else {
            await logind.stop()
            throw TestBusError(message: "fake logind on \(address): not on the bus within \(timeout)")
        }
        return logind
    }

    /// `PrepareForSleep(starting)`, as logind sends it before a sleep and after the resume.
    public func prepareForSleep(_ starting: Bool) {
        actions.withLock { $0.append(.prepareForSleep(starting)) }
    }

    /// The session's `Lock` or `Unlock`, and its `LockedHint` changed.
    public func setScreenLocked(_ locked: Bool) {
        actions.withLock { $0.append(.screen(locked: locked)) }
    }

    /// Goes off the bus and comes back on a new connection, its inhibitors kept (as logind
    /// keeps them in /run over a restart); returns once it owns the name again.
    public func restart() async {
        let before = owned.count
        actions.withLock { $0.append(.restart) }
        _ = await owned.first { $0 > before }
    }

    /// Stops serving and waits for the thread to end.
    public func stop() async {
        isStopped.store(true, ordering: .relaxed)
        _ = await finished.first { _ in true }
    }

    // MARK: On the server's thread

    private func serve(address: String) {
        defer { finished.append(true) }
        var held: [(what: String, fd: Int32)] = []
        defer { for inhibitor in held { close(inhibitor.fd) } }
        var bus = connect(address)
        while !isStopped.load(ordering: .relaxed), let current = bus {
            let processed = sd_bus_process(current, nil)
            if processed < 0 { break }
            if processed > 0 { continue }
            // One action at a time: after a restart the next ones go to the new connection.
            while let action = actions.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                guard let current = bus else { break }
                switch action {
                case .prepareForSleep(let starting): emit(current, path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep", bool: starting)
                case .screen(let locked):
                    lockedHint.withLock { $0 = locked }
                    emit(current, path: Self.sessionPath, interface: "org.freedesktop.login1.Session", member: locked ? "Lock" : "Unlock", bool: nil)
                    emitLockedHint(current, locked)
                case .restart:
                    sd_bus_flush_close_unref(current)
                    bus = connect(address)
                }
            }
            guard bus != nil else { break }
            held += taken.withLock { taken in defer { taken = [] }; return taken }
            // A released inhibitor: the client's end closed, this end hung up.
            held.removeAll { inhibitor in
                var poller = pollfd(fd: inhibitor.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 0) > 0, poller.revents & Int16(POLLHUP) != 0 else { return false }
                releases.append(Release(what: inhibitor.what, at: .now))
                close(inhibitor.fd)
                return true
            }
            // Wakes every 20 ms to see the tests' actions and the releases.
            if let bus { _ = sd_bus_wait(bus, 20_000) }
        }
        if let bus { sd_bus_flush_close_unref(bus) }
    }

    /// The read ends of inhibitors taken in a handler, handed to the loop.
    private let taken = Mutex<[(what: String, fd: Int32)]>([])

    private func connect(_ address: String) -> OpaquePointer? {
        var made: OpaquePointer?
        guard sd_bus_new(&made) >= 0, let bus = made else { return nil }
        var result = sd_bus_set_address(bus, address)
        if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
        if result >= 0 { result = sd_bus_start(bus) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        for path in ["/org/freedesktop/login1", Self.sessionPath] where result >= 0 {
            result = sd_bus_add_object(bus, nil, path, { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                return Unmanaged<TestLogind>.fromOpaque(userdata).takeUnretainedValue().handle(message)
            }, context)
        }
        if result >= 0 { result = sd_bus_request_name(bus, "org.freedesktop.login1", 0) }
        guard result >= 0 else {
            sd_bus_flush_close_unref(bus)
            return nil
        }
        owned.append(owned.count + 1)
        return bus
    }

    private func handle(_ message: OpaquePointer) -> Int32 {
        if sd_bus_message_is_method_call(message, "org.freedesktop.DBus.Properties", "Get") > 0 {
            let interface = string(message)
            let name = string(message)
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return -1 }
            defer { sd_bus_message_unref(reply) }
            switch (interface, name) {
            case ("org.freedesktop.login1.Manager", "InhibitDelayMaxUSec"):
                delayMaxQueries.append(delayMaxQueries.count + 1)
                var value = UInt64(delayMax.components.seconds) * 1_000_000 + UInt64(delayMax.components.attoseconds / 1_000_000_000_000)
                _ = sd_bus_message_open_container(reply, CChar(UInt8(ascii: "v")), "t")
                _ = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "t")), &value)
            case ("org.freedesktop.login1.Session", "LockedHint"):
                var value: Int32 = lockedHint.withLock { $0 } ? 1 : 0
                _ = sd_bus_message_open_container(reply, CChar(UInt8(ascii: "v")), "b")
                _ = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "b")), &value)
            default:
                return replyError(message, "org.freedesktop.DBus.Error.UnknownProperty", "no property \(interface).\(name)")
            }
            _ = sd_bus_message_close_container(reply)
            return sd_bus_send(nil, reply, nil) >= 0 ? 1 : -1
        }
        if sd_bus_message_is_method_call(message, "org.freedesktop.login1.Manager", "Inhibit") > 0 {
            let (what, who, _, mode) = (string(message), string(message), string(message), string(message))
            if refusesInhibitors {
                return replyError(message, "org.freedesktop.DBus.Error.AccessDenied", "Permission denied (polkit said no)")
            }
            // Close-on-exec from the start: a dbus-daemon a parallel test spawns must not hold
            // the client's end, or its close would never show.
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else { return -1 }
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else {
                ends.forEach { close($0) }
                return -1
            }
            defer { sd_bus_message_unref(reply) }
            var handed = ends[1]
            // sd-bus keeps a copy of its own.
            _ = sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "h")), &handed)
            let sent = sd_bus_send(nil, reply, nil)
            close(ends[1])
            taken.withLock { $0.append((what, ends[0])) }
            inhibitors.append(Inhibitor(what: what, who: who, mode: mode))
            return sent >= 0 ? 1 : -1
        }
        return 0
    }

    private func string(_ message: OpaquePointer) -> String {
        var value: UnsafePointer<CChar>?
        _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &value)
        return value.map { String(cString: $0) } ?? ""
    }

    private func replyError(_ message: OpaquePointer, _ name: String, _ text: String) -> Int32 {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        _ = sd_bus_error_set(&error, name, text)
        return sd_bus_reply_method_error(message, &error) >= 0 ? 1 : -1
    }

    private func emit(_ bus: OpaquePointer, path: String, interface: String, member: String, bool: Bool?) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, path, interface, member) >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        if let bool {
            var value: Int32 = bool ? 1 : 0
            _ = sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "b")), &value)
        }
        _ = sd_bus_send(bus, signal, nil)
    }

    /// `PropertiesChanged(Session, {LockedHint: locked}, [])`.
    private func emitLockedHint(_ bus: OpaquePointer, _ locked: Bool) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, Self.sessionPath, "org.freedesktop.DBus.Properties", "PropertiesChanged") >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        var value: Int32 = locked ? 1 : 0
        _ = "org.freedesktop.login1.Session".withCString { sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "s")), $0) }
        _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "a")), "{sv}")
        _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "e")), "sv")
        _ = "LockedHint".withCString { sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "s")), $0) }
        _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "v")), "b")
        _ = sd_bus_message_append_basic(signal, CChar(UInt8(ascii: "b")), &value)
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_message_open_container(signal, CChar(UInt8(ascii: "a")), "s")
        _ = sd_bus_message_close_container(signal)
        _ = sd_bus_send(bus, signal, nil)
    }
}

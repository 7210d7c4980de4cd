import AppHostSupport
import Glibc
import Synchronization
import SystemPackage

/// freedesktop's `Notify` over a session bus, for the notification service's `desktop` sink
/// (`BuiltinServices.registry(desktopNotifications:)`).
///
/// sd-bus calls it on the edge's event loop, each call asynchronous and bounded by
/// `callTimeout` (a new connection's authentication included, which sd-bus alone would wait
/// 90 s for), on one connection that comes back when the bus went away. The daemon's client is
/// on its edge loop, and shares a connection with the daemon's bus name when both are on the
/// user's bus; one made with the public init runs a loop of its own, started at its first use.
public final class DesktopNotificationClient: DesktopNotificationTransport {
    /// Which bus: `.user` finds it as sd-bus does (`$DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`).
    public let bus: DBusAddress
    /// How long one call may take, the connection's set-up included.
    public let callTimeout: Duration
    private let loop: EdgeEventLoop?
    private let current = Mutex<Joined?>(nil)

    /// The connection it is on, and its side there.
    private struct Joined: Sendable {
        let loop: EdgeEventLoop
        let ownsLoop: Bool
        let connection: DBusConnection
        let party: DesktopNotificationParty
    }

    /// A client of `bus`, on an event loop of its own.
    public convenience init(bus: DBusAddress = .user, callTimeout: Duration = .seconds(5)) {
        self.init(bus: bus, callTimeout: callTimeout, on: nil)
    }

    /// A client of `bus` on `loop` (the daemon's edge loop); nil: a loop of its own.
    package init(bus: DBusAddress, callTimeout: Duration = .seconds(5), on loop: EdgeEventLoop?) {
        self.bus = bus
        self.callTimeout = callTimeout
        self.loop = loop
    }

    deinit {
        guard let joined = current.withLock({ $0 }) else { return }
        joined.loop.perform { joined.connection.leave(joined.party.member) }
        if joined.ownsLoop { joined.loop.close() }
    }

    /// Why the bus cannot be reached (sd-bus's connect failed), or nil.
    public func unavailability() async -> String? {
        do {
            _ = try joined()
            return nil
        } catch {
            return error.description
        }
    }

    /// Sends one notification and waits for the server's answer, at most `callTimeout`.
    public func notify(appName: String, summary: String, body: String) async throws {
        let joined = try joined()
        let timeout = callTimeout
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let call = NotifyCall(continuation: continuation)
            do {
                try joined.loop.withLocal { _ in
                    joined.party.start(call, on: joined.connection, appName: appName, summary: summary, body: body, timeout: timeout)
                    return 0
                }
            } catch {
                call.finish(.failure(DesktopNotificationError(step: "Notify", message: "the event loop has ended")))
            }
        }
    }

    /// The connection, joined (again, after one that ended for good) at first use.
    private func joined() throws(DesktopNotificationError) -> Joined {
        try current.withLock { current throws(DesktopNotificationError) -> Joined in
            if let joined = current, !joined.party.hasEnded { return joined }
            if let old = current { old.loop.perform { old.connection.leave(old.party.member) } }
            let loop: EdgeEventLoop
            do {
                loop = try self.loop ?? current?.loop ?? EdgeEventLoop(name: "apphost-notify")
            } catch {
                throw DesktopNotificationError(step: "connect", message: "\(error)")
            }
            let party = DesktopNotificationParty()
            do throws(Errno) {
                let connection = try DBusConnection.join(bus, member: party.member, on: loop, endsLoop: false)
                current = Joined(loop: loop, ownsLoop: self.loop == nil, connection: connection, party: party)
                return current!
            } catch {
                if self.loop == nil, current == nil { loop.close() }
                throw DesktopNotificationError(step: "no session bus \(Self.place(of: bus))", message: SystemErrorText.describe(error.rawValue))
            }
        }
    }

    /// Where `bus` is, for the log: the address sd-bus tried, and where it came from.
    static func place(of bus: DBusAddress) -> String {
        guard case .user = bus else { return bus.place }
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty {
            return "at \(address) (DBUS_SESSION_BUS_ADDRESS)"
        }
        if let directory = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !directory.isEmpty {
            return "at \(directory)/bus ($XDG_RUNTIME_DIR/bus)"
        }
        return "(neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)"
    }
}

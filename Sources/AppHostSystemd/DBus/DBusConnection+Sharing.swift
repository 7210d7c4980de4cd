import CSystemd
import Glibc
import Synchronization
import SystemPackage

extension DBusConnection {
    /// Puts `member` on the loop's connection to `address`, made and added to the loop when
    /// there is none yet: one connection per bus for the whole daemon, however many of its edges
    /// speak there (dbus-daemon allows a user 256; a fleet of daemons on one machine would
    /// otherwise spend two each). On a loop of the edge's own (`endsLoop`) it is the loop's only
    /// connection, and closing it ends the loop.
    ///
    /// `.default` is the system bus or the user's once `sd_bus_open` chose (a system unit, a user
    /// manager's): sd-bus's scope of the connection says which, and the second to come joins the
    /// first. The member leaves with `leave`; the last to leave closes the connection.
    /// - Throws: the errno of a connection that could not be made, or of the member's set-up.
    package static func join(_ address: DBusAddress, member: Member, on loop: EdgeEventLoop, endsLoop: Bool) throws(Errno) -> DBusConnection {
        let joined = Mutex<DBusConnection?>(nil)
        try loop.withLocal { local in
            var found = joinable(key(of: address), in: local)
            var opened: OpaquePointer?
            let scoped = [("system", DBusAddress.system), ("user", .user)].compactMap { scope, bus in joinable(key(of: bus), in: local).map { (scope, $0) } }
            if found == nil, address == .default, !scoped.isEmpty {
                // Which bus sd_bus_open chose is known once it connected.
                let result = sd_bus_open(&opened)
                guard result >= 0, let bus = opened else { return -result }
                if let match = scoped.first(where: { $0.0 == scope(of: bus) })?.1 {
                    sd_bus_close_unref(bus)
                    opened = nil
                    local.shared[key(of: address)] = match
                    found = match
                }
            }
            if let found {
                let result = found.add(member)
                if result >= 0 { joined.withLock { $0 = found } }
                return -min(result, 0)
            }
            let made = DBusConnection(address, on: loop, endsLoop: endsLoop, member: member, opened: opened)
            let code = local.add(made)
            guard code == 0 else { return code }
            var keys = [key(of: address)]
            if made.scope == "system" { keys.append(key(of: .system)) }
            if made.scope == "user" { keys.append(key(of: .user)) }
            for key in keys where local.shared[key] == nil { local.shared[key] = made }
            made.unregister = { [unowned local, unowned made] in
                for (key, value) in local.shared where value === made { local.shared[key] = nil }
            }
            joined.withLock { $0 = made }
            return 0
        }
        // Set whenever the work returned 0.
        return joined.withLock { $0! }
    }

    private static func key(of address: DBusAddress) -> String {
        switch address {
        case .default: "dbus:default"
        case .system: "dbus:system"
        case .user: "dbus:user"
        case .address(let text): "dbus:" + text
        }
    }

    private static func joinable(_ key: String, in local: EdgeEventLoop.Local) -> DBusConnection? {
        (local.shared[key] as? DBusConnection).flatMap { $0.isJoinable ? $0 : nil }
    }
}

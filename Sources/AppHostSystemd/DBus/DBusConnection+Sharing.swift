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
    /// `.processDefault` and `.system` are the same bus when `sd_bus_open` chose the system bus
    /// (a system unit): sd-bus's scope of the connection says so, and the second to come joins the
    /// first. The member leaves with `leave`; the last to leave closes the connection.
    /// - Throws: the errno of a connection that could not be made, or of the member's set-up.
    package static func join(_ address: Address, member: Member, on loop: EdgeEventLoop, endsLoop: Bool) throws(Errno) -> DBusConnection {
        let joined = Mutex<DBusConnection?>(nil)
        try loop.withLocal { local in
            var found = joinable(key(of: address), in: local)
            var opened: OpaquePointer?
            if found == nil, address == .processDefault, let system = joinable(key(of: .system), in: local) {
                // Whether sd_bus_open's choice is the system bus is known once it connected.
                let result = sd_bus_open(&opened)
                guard result >= 0, let bus = opened else { return -result }
                if scope(of: bus) == "system" {
                    sd_bus_close_unref(bus)
                    opened = nil
                    local.shared[key(of: address)] = system
                    found = system
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
            let keys = [key(of: address)] + (made.scope == "system" && address != .system ? [key(of: .system)] : [])
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

    private static func key(of address: Address) -> String {
        switch address {
        case .processDefault: "dbus:default"
        case .system: "dbus:system"
        case .address(let text): "dbus:" + text
        }
    }

    private static func joinable(_ key: String, in local: EdgeEventLoop.Local) -> DBusConnection? {
        (local.shared[key] as? DBusConnection).flatMap { $0.isJoinable ? $0 : nil }
    }
}

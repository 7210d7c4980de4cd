/// Which D-Bus bus: the one name for it across the daemon's bus server, its clients
/// (`apphostd status`, logind's) and the desktop notifications.
#if hasAttribute(nonexhaustive)
@nonexhaustive(warn)
#endif
public enum DBusAddress: Sendable, Hashable {
    /// `sd_bus_open`'s choice for the process: the user bus in a user's session or under a
    /// user manager, else the system bus. Where the daemon's name goes, as systemd's daemons do.
    case `default`
    /// The system bus (`sd_bus_open_system`): where logind is, also for a user's daemon.
    case system
    /// The user's bus (`sd_bus_open_user`: `$DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`): where a desktop's notification server is.
    case user
    /// A bus at this D-Bus address (a test's private dbus-daemon, a given session bus).
    case address(String)
}

extension DBusAddress {
    /// How the log names it: "no bus \(place)".
    package var place: String {
        switch self {
        case .default: "(sd_bus_open)"
        case .system: "(the system bus)"
        case .user: "(sd_bus_open_user: neither DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR/bus)"
        case .address(let text): "at \(text)"
        }
    }
}

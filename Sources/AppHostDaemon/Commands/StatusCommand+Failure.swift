import AppHostSystemd
import Glibc

extension StatusCommand {
    /// What a failed call prints, and the exit status it means. Each message says what is
    /// missing and what to do, for the bus the command was given.
    static func fail(_ error: HostDBusClient.Failure, command: String, busName: String, bus: DBusAddress, identity: DaemonIdentity) -> ExitStatus {
        let name = identity.commandName
        let invocation = "\(name) \(command)"
        if let errno = error.unreachable {
            StandardError.write("\(invocation): \(unreachable(bus, errno: errno, reason: error.message, name: name))\n")
            return .unavailable
        }
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            let hint = switch bus {
            case .user: "is it running? (systemctl --user status \(name)); for the system unit, leave out --user"
            case .system, .default, .address: "is it running? (systemctl status \(name)); for a unit of your user manager, add --user"
            }
            StandardError.write("\(invocation): no daemon on the \(bus == .user ? "user" : "system") bus as \(busName): \(hint)\n")
            return .unavailable
        case "org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
            StandardError.write("\(invocation): refused: only root or the daemon's user may do this on the system bus (\(error.message)); run it with sudo\n")
            return .permissionDenied
        case "org.apphost.Host1.Error.NoSuchService":
            StandardError.write("\(invocation): \(error.message)\n")
            return .badInput
        case "org.apphost.Host1.Error.FailedToLaunch", "org.apphost.Host1.Error.NotRunning":
            StandardError.write("\(invocation): \(error.message)\n")
            return .launchFailed
        case nil, "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.UnknownObject",
             "org.freedesktop.DBus.Error.UnknownInterface", "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownProperty":
            // No daemon to ask, or one without Host1 (an older apphostd).
            StandardError.write("\(invocation): \(error.name.map { "\($0): " } ?? "")\(error.message)\n")
            return .unavailable
        default:
            StandardError.write("\(invocation): \(error.name ?? ""): \(error.message)\n")
            return .launchFailed
        }
    }

    /// Why `bus` could not be reached, in words, and what to do.
    static func unreachable(_ bus: DBusAddress, errno: Int32, reason: String, name: String) -> String {
        switch bus {
        case .user where errno == ENOMEDIUM:
            // sd_bus_open_user's answer when neither variable says where the bus is.
            return "no user bus to reach the daemon on: neither $DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR is set. "
                + "Run it as the user whose manager runs \(name), in their login session (under sudo: sudo -u USER XDG_RUNTIME_DIR=/run/user/UID \(name) … --user), or leave out --user for the system unit"
        case .user:
            return "cannot reach your user bus (\(reason)): is your user manager's dbus running? (systemctl --user status dbus.socket); for the system unit, leave out --user"
        case .system where errno == ENOENT || errno == ECONNREFUSED:
            return "no system bus to reach the daemon on (\(reason)): start D-Bus (systemctl start dbus.socket; Debian's package dbus), or for a unit of your user manager add --user"
        case .system:
            return "cannot reach the system bus (\(reason)); for a unit of your user manager, add --user"
        case .default, .address:
            // The commands ask for --user or the system bus only.
            return "cannot reach the bus \(bus.place) (\(reason))"
        }
    }
}

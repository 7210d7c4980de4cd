import AppHostSystemd

/// One command line of the daemon, parsed: the subcommand and its options.
///
/// Parsed by hand rather than with swift-argument-parser, which brings FoundationEssentials
/// (about 1,900 protocol conformances that every start scans, and 12 MB of the static binary)
/// and builds its command tree by reflection before it reads an argument.
package enum Invocation: Equatable, Sendable {
    /// `run`, the default: the daemon, on the config `config` names (nil: the default).
    case run(config: String?)
    /// `check`: validates a config file without running it.
    case check(config: String?)
    /// `services`: lists the service types the registry can build.
    case services
    /// `analytics`: prints the usage report of a state directory.
    case analytics(json: Bool, config: String?, stateDirectory: String?)
    /// `reload`: SIGHUPs the running daemon and waits for its answer (for `ExecReload=`).
    case reload(pid: String?, config: String?, stateDirectory: String?)
    /// `status`: what the running daemon says about itself and each service, over the bus.
    case status(json: Bool, watch: Bool = false, bus: DBusAddress)
    /// `restart NAME`: restarts one service of the running daemon, over the bus.
    case restart(service: String, bus: DBusAddress)
    /// `record-exit`: records why the daemon's process ended, for its next launch (for
    /// `ExecStopPost=`).
    case recordExit(config: String?, stateDirectory: String?)
    /// `--help`, `-h` or `help [SUBCOMMAND]`: help for a subcommand, or for the command (nil).
    case help(Subcommand?)
    /// `--version`.
    case version

    /// The subcommands, by the name typed.
    package enum Subcommand: String, CaseIterable, Sendable {
        case run, check, reload, status, restart, services, analytics
        case recordExit = "record-exit"

        /// One line for the subcommand list.
        var abstract: String {
            switch self {
            case .run: "Run the daemon: launch the services, then serve signals until SIGTERM."
            case .check: "Validate a config file without running it (exit 0 when valid, 78 when not)."
            case .reload: "Reload the running daemon's config (SIGHUP) and wait for its answer: exit 0 when applied, 78 when refused (for ExecReload=)."
            case .status: "Show the running daemon's state and each service's (failures first), over the bus (org.apphost.Host1)."
            case .restart: "Restart one service of the running daemon, over the bus (root or the daemon's user on the system bus)."
            case .services: "List the service types this daemon can run."
            case .analytics: "Print the usage report from the state directory (a table, or JSON with --json)."
            case .recordExit: "Record why the daemon's process ended, from systemd's $SERVICE_RESULT, $EXIT_CODE and $EXIT_STATUS, for its next launch (for ExecStopPost=)."
            }
        }

        /// The options it takes, in the order help lists them.
        var options: [Option] {
            switch self {
            case .run, .check: [.config]
            case .services: []
            case .analytics: [.json, .config, .stateDirectory]
            case .reload: [.pid, .config, .stateDirectory]
            case .recordExit: [.config, .stateDirectory]
            case .status: [.json, .watch, .user, .system]
            case .restart: [.user, .system]
            }
        }

        /// Its one positional argument, as help names it; nil when it takes none.
        var argument: String? {
            self == .restart ? "service" : nil
        }
    }

    /// An option of a subcommand.
    package struct Option: Equatable, Sendable {
        /// `--name`.
        package let name: String
        /// `-c`, if it has a short form.
        let short: String?
        /// What its value is called in help (`<file>`); nil for a flag.
        let value: String?
        /// Its line in help.
        let help: String

        package static let config = Option(
            name: "--config", short: "-c", value: "file",
            help: "The config file."
        )
        package static let json = Option(name: "--json", short: nil, value: nil, help: "Print JSON for scripts instead of a table.")
        package static let watch = Option(
            name: "--watch", short: nil, value: nil,
            help: "Then print one line (with --json one object) per change the daemon announces, until Ctrl-C."
        )
        package static let user = Option(name: "--user", short: nil, value: nil, help: "Talk to the daemon on your user bus (a unit of your user manager).")
        package static let system = Option(name: "--system", short: nil, value: nil, help: "Talk to the daemon on the system bus (the default).")
        package static let pid = Option(
            name: "--pid", short: nil, value: "pid",
            help: "The daemon to reload ($MAINPID by default, which systemd sets for ExecReload=)."
        )
        package static let stateDirectory = Option(
            name: "--state-directory", short: nil, value: "directory",
            help: "The state directory (instead of the one the config names)."
        )
    }

    /// A command line that cannot be run, and the subcommand whose usage to show.
    package struct UsageError: Error, Equatable, CustomStringConvertible {
        package let message: String
        package let subcommand: Subcommand?

        package var description: String { message }
    }
}

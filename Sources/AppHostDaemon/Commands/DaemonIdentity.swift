/// Who a daemon built on AppHost is: its command name, version, description and defaults.
///
/// A program with services of its own passes one to `ApphostdCommand.main(registry:identity:)`
/// so that its `--help`, messages, journal identifier, config path and state directory are its
/// own, and it never shares launch counts or analytics with an apphostd on the same machine.
public struct DaemonIdentity: Sendable, Hashable {
    /// The command name `--help` and messages use, and the journal's `SYSLOG_IDENTIFIER`.
    public var commandName: String
    /// What `--version` prints.
    public var version: String
    /// One sentence for the top of `--help`.
    public var abstract: String
    /// The config file when neither `--config` nor `configVariable` names one.
    public var defaultConfigPath: String
    /// The environment variable that names the config file (`APPHOSTD_CONFIG`).
    public var configVariable: String
    /// The last component of the default state directory: `$XDG_STATE_HOME/<name>`,
    /// `~/.local/state/<name>`, `/var/lib/<name>` (under systemd, `$STATE_DIRECTORY` wins).
    public var stateDirectoryName: String

    /// An identity for `commandName`; the defaults follow from the name
    /// (`/etc/NAME/NAME.yaml`, `NAME_CONFIG`, state directory `NAME`).
    public init(
        commandName: String,
        version: String,
        abstract: String,
        defaultConfigPath: String? = nil,
        configVariable: String? = nil,
        stateDirectoryName: String? = nil
    ) {
        self.commandName = commandName
        self.version = version
        self.abstract = abstract
        self.defaultConfigPath = defaultConfigPath ?? "/etc/\(commandName)/\(commandName).yaml"
        self.configVariable = configVariable ?? Self.variableName(commandName) + "_CONFIG"
        self.stateDirectoryName = stateDirectoryName ?? commandName
    }

    /// apphostd's own identity.
    public static let apphostd = DaemonIdentity(
        commandName: "apphostd",
        version: "0.1.0",
        abstract: "Hosts pluggable application services and drives them through a UIKit-style lifecycle under systemd."
    )

    /// `my-daemon` → `MY_DAEMON`.
    static func variableName(_ name: String) -> String {
        String(name.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}

import AppHost
import AppHostSupport
import AppHostSystemd
import AppHostServices
import Glibc

/// `apphostd analytics`: prints what the analytics service recorded in the state directory.
struct AnalyticsCommand {
    /// `--json`: JSON for scripts instead of a table.
    let json: Bool
    /// `--config`: take the state directory from this config file.
    let config: String?
    /// `--state-directory`: the state directory to read (overrides `--config`).
    let stateDirectory: String?

    /// Prints the report; `.badConfiguration` when the config is wrong, `.launchFailed` when
    /// the report cannot be read.
    func run() -> ExitStatus {
        let directory: String
        do {
            let (found, note) = try Self.stateDirectory(
                stateDirectory: stateDirectory, config: config, environment: ProcessEnvironment.current,
                registry: ApphostdCommand.registry(), identity: ApphostdCommand.identity()
            )
            if let note { StandardError.write("\(ApphostdCommand.name): \(note)\n") }
            directory = found
        } catch {
            for line in error.lines(commandName: ApphostdCommand.name) { StandardError.write(line + "\n") }
            return .badConfiguration
        }
        do {
            let report = try AnalyticsReport.load(stateDirectory: directory)
            print(json ? report.renderJSON() : report.renderTable(), terminator: "")
            return .clean
        } catch {
            StandardError.write("\(ApphostdCommand.name): cannot read analytics in \(directory): \(error)\n")
            return .launchFailed
        }
    }

    /// The directory to read: `--state-directory`; else the one the config names; else, when
    /// no config was asked for and the default one does not exist, the daemon's default state
    /// directory, with a note saying so.
    static func stateDirectory(
        stateDirectory: String?, config: String?, environment: [String: String], registry: ServiceRegistry,
        identity: DaemonIdentity = .apphostd
    ) throws(InvalidConfiguration) -> (directory: String, note: String?) {
        if let stateDirectory { return (stateDirectory, nil) }
        let path = config ?? environment[identity.configVariable] ?? identity.defaultConfigPath
        var status = stat()
        if config == nil, environment[identity.configVariable] == nil, stat(path, &status) != 0, errno == ENOENT {
            let directory = ConfigurationLoader.defaultStateDirectory(environment: environment, name: identity.stateDirectoryName)
            return (directory, "no config at \(path); reading the default state directory \(directory)")
        }
        let loader = ConfigurationLoader(registry: registry, environment: environment, stateDirectoryName: identity.stateDirectoryName)
        return (try loader.load(path: path).stateDirectory, nil)
    }
}

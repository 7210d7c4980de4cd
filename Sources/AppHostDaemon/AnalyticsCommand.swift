import AppHost
import AppHostSystemd
import AppHostServices

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
        if let stateDirectory {
            directory = stateDirectory
        } else {
            do {
                directory = try ConfigurationLoader(registry: ApphostdCommand.registry()).load(path: ApphostdCommand.resolveConfigPath(config)).stateDirectory
            } catch {
                StandardError.write("\(ApphostdCommand.name): \(error)\n")
                return .badConfiguration
            }
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
}

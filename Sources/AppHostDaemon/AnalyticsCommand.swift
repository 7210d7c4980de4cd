import AppHost
import AppHostSystemd
import AppHostServices
import ArgumentParser

/// `apphostd analytics`: prints what the analytics service recorded in the state directory.
struct AnalyticsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Print the usage report from the state directory (a table, or JSON with --json)."
    )

    @Flag(help: "Print JSON for scripts instead of a table.")
    var json = false

    @Option(name: .shortAndLong, help: "Take the state directory from this config file.")
    var config: String?

    @Option(help: "The state directory to read (overrides --config).")
    var stateDirectory: String?

    func run() throws {
        let directory: String
        if let stateDirectory {
            directory = stateDirectory
        } else {
            do {
                directory = try ConfigurationLoader(registry: ApphostdCommand.registry()).load(path: ApphostdCommand.resolveConfigPath(config)).stateDirectory
            } catch {
                StandardError.write("apphostd: \(error)\n")
                throw ExitStatus.badConfiguration
            }
        }
        do {
            let report = try AnalyticsReport.load(stateDirectory: directory)
            print(json ? report.renderJSON() : report.renderTable())
        } catch {
            StandardError.write("apphostd: cannot read analytics in \(directory): \(error)\n")
            throw ExitStatus.launchFailed
        }
    }
}

import AppHost
import AppHostServices
import ArgumentParser
import Foundation

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
                FileHandle.standardError.write(Data("apphostd: \(error)\n".utf8))
                throw ExitStatus.badConfiguration
            }
        }
        do {
            let report = try AnalyticsReport.load(stateDirectory: directory)
            print(json ? try report.renderJSON() : report.renderTable())
        } catch {
            FileHandle.standardError.write(Data("apphostd: cannot read analytics in \(directory): \(error)\n".utf8))
            throw ExitStatus.launchFailed
        }
    }
}

import AppHost
import AppHostSystemd
import ArgumentParser

/// `apphostd check`: validates a config file the way `run` and a reload would, without running.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a config file without running it (exit 0 when valid, 78 when not)."
    )

    @Option(name: .shortAndLong, help: "The config file (default: $APPHOSTD_CONFIG, else /etc/apphostd/apphostd.yaml).")
    var config: String?

    func run() throws {
        let path = ApphostdCommand.resolveConfigPath(config)
        do {
            let loaded = try ConfigurationLoader(registry: ApphostdCommand.registry()).load(path: path)
            let names = loaded.services.map(\.name)
            print("OK: \(RawPath.displayed(path)): \(names.count) service\(names.count == 1 ? "" : "s") (\(names.joined(separator: ", ")))")
        } catch {
            StandardError.write("apphostd: \(error)\n")
            throw ExitStatus.badConfiguration
        }
    }
}

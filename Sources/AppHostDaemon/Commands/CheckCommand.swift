import AppHost
import AppHostSystemd

/// `apphostd check`: validates a config file the way `run` and a reload would, without running.
struct CheckCommand {
    /// `--config`, if given.
    let config: String?

    /// Prints `OK: …` and returns `.clean`, or prints every problem of the file, one per line,
    /// and returns `.badConfiguration`.
    func run() -> ExitStatus {
        let path = ApphostdCommand.resolveConfigPath(config)
        do {
            let loaded = try ApphostdCommand.loader().load(path: path)
            let names = loaded.services.map(\.outline)
            print("OK: \(RawPath.displayed(path)): \(names.count.counted("service")) (\(names.joined(separator: ", ")))")
            return .clean
        } catch {
            for line in error.lines(commandName: ApphostdCommand.name) { StandardError.write(line + "\n") }
            return .badConfiguration
        }
    }
}

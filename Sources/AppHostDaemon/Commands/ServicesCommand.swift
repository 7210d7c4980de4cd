import AppHost

/// `apphostd services`: what the registry can build, by the name a config uses as `type`.
struct ServicesCommand {
    /// Prints one line per service type.
    func run() -> ExitStatus {
        let entries = ApphostdCommand.registry().entriesByName
        let width = entries.map(\.name.count).max() ?? 0
        for entry in entries {
            print(entry.name + String(repeating: " ", count: width - entry.name.count) + "  " + entry.summary)
        }
        return .clean
    }
}

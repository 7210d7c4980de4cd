import AppHost
import ArgumentParser

/// `apphostd services`: what the registry can build, by the name a config uses as `type`.
struct ServicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "services",
        abstract: "List the service types this apphostd can run."
    )

    func run() {
        let entries = ApphostdCommand.registry().entriesByName
        let width = entries.map(\.name.count).max() ?? 0
        for entry in entries {
            print(entry.name + String(repeating: " ", count: width - entry.name.count) + "  " + entry.summary)
        }
    }
}

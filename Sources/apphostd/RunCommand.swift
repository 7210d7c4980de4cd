import ArgumentParser

/// `apphostd run`: the daemon.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the daemon (the default command): launch the services, then serve signals until SIGTERM."
    )

    @Option(name: .shortAndLong, help: "The config file (default: $APPHOSTD_CONFIG, else /etc/apphostd/apphostd.yaml).")
    var config: String?

    func run() async throws {
        let status = await Daemon(configPath: Apphostd.resolveConfigPath(config), registry: Apphostd.registry()).run()
        if status != ExitStatus.clean { throw status }
    }
}

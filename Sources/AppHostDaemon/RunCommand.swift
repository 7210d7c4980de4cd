import ArgumentParser
import Dispatch

/// `apphostd run`: the daemon.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the daemon (the default command): launch the services, then serve signals until SIGTERM."
    )

    @Option(name: .shortAndLong, help: "The config file (default: $APPHOSTD_CONFIG, else /etc/apphostd/apphostd.yaml).")
    var config: String?

    func run() throws {
        try Self.runDaemon(config: config)
    }

    /// Runs the daemon on the config `config` names (see `ApphostdCommand.resolveConfigPath`);
    /// throws the exit status unless it is clean.
    static func runDaemon(config: String?) throws {
        let daemon = Daemon(configPath: ApphostdCommand.resolveConfigPath(config), registry: ApphostdCommand.registry())
        let status = ExitCodeBox()
        let finished = DispatchSemaphore(value: 0)
        // The one unstructured task: the bridge from the synchronous entry (see `ApphostdCommand`) to
        // the daemon's structured task tree. The main thread waits for it with signals blocked.
        Task {
            status.value = await daemon.run()
            finished.signal()
        }
        finished.wait()
        if status.value != ExitStatus.clean { throw status.value }
    }
}

/// Carries the daemon's exit status from the task to the waiting main thread; the semaphore
/// orders the write before the read.
private final class ExitCodeBox: @unchecked Sendable {
    var value = ExitStatus.clean
}

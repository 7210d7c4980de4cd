import AppHost
import AppHostServices
import AppHostSystemd
import CApphostdPrelude
import Glibc
import Synchronization

/// The apphostd command line: `run` (the default), `check`, `services`, `analytics`.
///
/// An executable with services of its own runs the same daemon with
/// `ApphostdCommand.main(registry:)`.
///
/// Synchronous on purpose: an async `main` parks the main thread in `dispatch_main`, which waits
/// in `sigsuspend` with an empty mask, and a lifecycle signal would then kill the process instead
/// of reaching the daemon's signalfd. `RunCommand` keeps the main thread blocked in a wait that
/// leaves the signal mask alone.
public enum ApphostdCommand {
    /// The version `--version` prints.
    public static let version = "0.1.0"

    /// The name help and messages use.
    static let name = "apphostd"

    /// Parses the command line and runs it with `registry` as the services the config may name;
    /// exits the process with one of the documented exit codes.
    public static func main(registry: ServiceRegistry) -> Never {
        installedRegistry.withLock { $0 = registry }
        // The arguments as given: a config path that is not UTF-8 keeps its bytes (`RawPath`).
        let arguments = (1..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { RawPath.decode(UnsafePointer($0)) } }
        exit(run(arguments).rawValue)
    }

    /// Runs the command line `arguments` (without the program name); returns the exit status.
    static func run(_ arguments: [String]) -> ExitStatus {
        let command: DaemonCommand
        do {
            command = try DaemonCommand.parse(arguments)
        } catch {
            StandardError.write(DaemonCommand.report(error, command: name))
            return .usage
        }
        switch command {
        case .run(let config):
            return RunCommand(config: config).run()
        case .check(let config):
            return CheckCommand(config: config).run()
        case .services:
            return ServicesCommand().run()
        case .analytics(let json, let config, let stateDirectory):
            return AnalyticsCommand(json: json, config: config, stateDirectory: stateDirectory).run()
        case .help(let subcommand):
            print(DaemonCommand.help(for: subcommand, command: name), terminator: "")
            return .clean
        case .version:
            print(version)
            return .clean
        }
    }

    /// The registry the daemon builds services from: the built-ins unless `main(registry:)` was
    /// given another.
    static func registry() -> ServiceRegistry {
        installedRegistry.withLock { $0 } ?? BuiltinServices.registry()
    }

    private static let installedRegistry = Mutex<ServiceRegistry?>(nil)

    /// The config file when neither `--config` nor `$APPHOSTD_CONFIG` names one.
    static let defaultConfigPath = "/etc/apphostd/apphostd.yaml"

    /// The config file named by `--config`, `$APPHOSTD_CONFIG` or the system default.
    static func resolveConfigPath(_ option: String?) -> String {
        option ?? ProcessEnvironment.current["APPHOSTD_CONFIG"] ?? defaultConfigPath
    }
}

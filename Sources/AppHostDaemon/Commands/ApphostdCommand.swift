import AppHost
import AppHostServices
import AppHostSupport
import AppHostSystemd
import CApphostdPrelude
import Glibc
import Synchronization

/// The apphostd command line: `run` (the default), `check`, `reload`, `services`, `analytics`,
/// `record-exit`.
///
/// An executable with services of its own runs the same daemon with
/// `ApphostdCommand.main(registry:)`.
///
/// Synchronous on purpose: an async `main` parks the main thread in `dispatch_main`, which waits
/// in `sigsuspend` with an empty mask, and a lifecycle signal would then kill the process instead
/// of reaching the daemon's signalfd. `RunCommand` keeps the main thread blocked in a wait that
/// leaves the signal mask alone.
public enum ApphostdCommand {
    /// apphostd's version, what `--version` prints for it.
    public static let version = DaemonIdentity.apphostd.version

    /// Parses the command line and runs it with `registry` as the services the config may name,
    /// as the daemon `identity` names; exits the process with one of the documented exit codes.
    public static func main(registry: ServiceRegistry, identity: DaemonIdentity = .apphostd) -> Never {
        installedRegistry.withLock { $0 = registry }
        installedIdentity.withLock { $0 = identity }
        // The arguments as given: a config path that is not UTF-8 keeps its bytes (`RawPath`).
        let arguments = (1..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { RawPath.decode(UnsafePointer($0)) } }
        exit(run(arguments).rawValue)
    }

    /// Runs the command line `arguments` (without the program name); returns the exit status.
    static func run(_ arguments: [String]) -> ExitStatus {
        let command: Invocation
        do {
            command = try Invocation.parse(arguments)
        } catch {
            StandardError.write(Invocation.report(error, identity: identity()))
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
        case .reload(let pid, let config, let stateDirectory):
            return ReloadCommand(pid: pid, config: config, stateDirectory: stateDirectory).run()
        case .status(let json, let watch, let bus):
            return StatusCommand(json: json, watch: watch, bus: bus, identity: identity()).run()
        case .restart(let service, let bus):
            return RestartCommand(service: service, bus: bus, identity: identity()).run()
        case .recordExit(let config, let stateDirectory):
            return RecordExitCommand(config: config, stateDirectory: stateDirectory, environment: ProcessEnvironment.current).run()
        case .help(let subcommand):
            print(Invocation.help(for: subcommand, identity: identity()), terminator: "")
            return .clean
        case .version:
            print(identity().version)
            return .clean
        }
    }

    /// The registry the daemon builds services from: the built-ins unless `main(registry:)` was
    /// given another.
    static func registry() -> ServiceRegistry {
        installedRegistry.withLock { $0 } ?? BuiltinServices.registry()
    }

    private static let installedRegistry = Mutex<ServiceRegistry?>(nil)

    /// The identity `main(registry:identity:)` was given; apphostd's before.
    static func identity() -> DaemonIdentity {
        installedIdentity.withLock { $0 }
    }

    private static let installedIdentity = Mutex<DaemonIdentity>(.apphostd)

    /// The command name messages start with.
    static var name: String { identity().commandName }

    /// The config file named by `--config`, the identity's variable (`$APPHOSTD_CONFIG`) or its
    /// default path.
    static func resolveConfigPath(_ option: String?) -> String {
        let identity = identity()
        return option ?? ProcessEnvironment.current[identity.configVariable] ?? identity.defaultConfigPath
    }

    /// A loader for the identity's daemon: `registry()` and its default state directory.
    static func loader(environment: [String: String] = ProcessEnvironment.current) -> ConfigurationLoader {
        ConfigurationLoader(registry: registry(), environment: environment, stateDirectoryName: identity().stateDirectoryName)
    }
}

import AppHost
import AppHostSystemd
import AppHostServices
import ArgumentParser
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
public struct ApphostdCommand: ParsableCommand {
    /// The version `--version` prints.
    public static let version = "0.1.0"

    /// The command line's description, subcommands and `--help` text.
    public static let configuration = CommandConfiguration(
        commandName: "apphostd",
        abstract: "Hosts pluggable application services and drives them through a UIKit-style lifecycle under systemd.",
        discussion: """
            Signals (systemctl kill -s SIGNAL apphostd, or kill -s SIGNAL PID):
              SIGTERM, SIGINT  terminate: STOPPING=1, willTerminate (reverse order);
                               during launch, stop waiting and roll back
              SIGUSR1          toggle background/foreground (coalesces in a storm)
              SIGRTMIN+1       enter background (explicit, idempotent, queued)
              SIGRTMIN+2       enter foreground (explicit, idempotent, queued)
              SIGRTMIN+18      trim memory: a critical memory warning, malloc_trim
              SIGHUP           reload the config as one transaction
            Memory pressure: $MEMORY_PRESSURE_WATCH, else the cgroup's or the
            system's PSI file (/proc/pressure/memory).

            Exit codes: 0 clean exit, 1 launch failed, 75 state directory in use by
            another daemon (EX_TEMPFAIL), 78 bad config (EX_CONFIG).
            """,
        version: version,
        subcommands: [RunCommand.self, CheckCommand.self, ServicesCommand.self, AnalyticsCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// Parses the command line and runs it with `registry` as the services the config may name;
    /// exits the process.
    public static func main(registry: ServiceRegistry) -> Never {
        installedRegistry.withLock { $0 = registry }
        // The arguments as given: a config path that is not UTF-8 keeps its bytes (`RawPath`).
        let arguments = (1..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { RawPath.decode(UnsafePointer($0)) } }
        if let config = runConfigOption(arguments) {
            // The start under systemd, the path readiness is measured on: swift-argument-parser
            // would build the whole command tree by reflection first (about 2 ms of a 17 ms
            // start). Anything but the plain shapes below goes through the parser.
            do {
                try RunCommand.runDaemon(config: config)
            } catch {
                exit(withError: error)
            }
        } else {
            main(arguments)
        }
        Glibc.exit(0)
    }

    /// The `--config` value when `arguments` (without the program name) are one of the plain
    /// shapes of the run command: nothing, `run`, and either followed by `--config FILE`,
    /// `-c FILE` or `--config=FILE`. `.some(nil)` means no `--config`; `nil` means another shape,
    /// for the parser to handle.
    static func runConfigOption(_ arguments: [String]) -> String?? {
        var rest = arguments[...]
        if rest.first == "run" { rest = rest.dropFirst() }
        switch rest.count {
        case 0:
            return .some(nil)
        case 1:
            guard let first = rest.first, first.hasPrefix("--config=") else { return nil }
            let value = String(first.dropFirst("--config=".count))
            guard !value.isEmpty else { return nil }
            return value
        case 2:
            let option = rest[rest.startIndex], value = rest[rest.startIndex + 1]
            guard option == "--config" || option == "-c", !value.isEmpty, !value.hasPrefix("-") else { return nil }
            return value
        default:
            return nil
        }
    }

    /// The registry the daemon builds services from: the built-ins unless `main(registry:)` was
    /// given another.
    static func registry() -> ServiceRegistry {
        installedRegistry.withLock { $0 } ?? BuiltinServices.registry()
    }

    private static let installedRegistry = Mutex<ServiceRegistry?>(nil)

    public init() {}

    /// The config file named by `--config`, `$APPHOSTD_CONFIG` or the system default.
    static func resolveConfigPath(_ option: String?) -> String {
        option ?? ProcessEnvironment.current["APPHOSTD_CONFIG"] ?? "/etc/apphostd/apphostd.yaml"
    }
}

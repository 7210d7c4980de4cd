import AppHost
import AppHostServices
import ArgumentParser
import CApphostdPrelude
import Foundation

/// The apphostd command line: `run` (the default), `check`, `services`, `analytics`.
///
/// Synchronous on purpose: an async `main` parks the main thread in `dispatch_main`, which waits
/// in `sigsuspend` with an empty mask, and a lifecycle signal would then kill the process instead
/// of reaching the daemon's signalfd. `RunCommand` keeps the main thread blocked in a wait that
/// leaves the signal mask alone.
@main
struct Apphostd: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "apphostd",
        abstract: "Hosts pluggable application services and drives them through a UIKit-style lifecycle under systemd.",
        discussion: """
            Signals (send with `systemctl kill -s SIGNAL apphostd` or `kill`):
              SIGTERM, SIGINT   terminate: STOPPING=1, applicationWillTerminate (reverse order), exit 0
              SIGUSR1           toggle background/foreground (coalesces under a storm)
              SIGRTMIN+1        enter background (explicit, idempotent, queued)
              SIGRTMIN+2        enter foreground (explicit, idempotent, queued)
              SIGRTMIN+18       trim memory: a critical memory warning, then malloc_trim
              SIGHUP            reload the config as one transaction (RELOADING=1 … READY=1)
            Memory pressure comes from $MEMORY_PRESSURE_WATCH, else the cgroup's or the
            system's PSI file (/proc/pressure/memory).

            Exit codes: 0 clean exit, 1 launch failed, 78 bad configuration (EX_CONFIG).
            """,
        version: version,
        subcommands: [RunCommand.self, CheckCommand.self, ServicesCommand.self, AnalyticsCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// The registry the daemon builds services from: the built-ins, plus whatever an embedding
    /// program registers.
    static func registry() -> ServiceRegistry {
        BuiltinServices.registry()
    }

    /// The config file named by `--config`, `$APPHOSTD_CONFIG` or the system default.
    static func resolveConfigPath(_ option: String?) -> String {
        option ?? ProcessInfo.processInfo.environment["APPHOSTD_CONFIG"] ?? "/etc/apphostd/apphostd.yaml"
    }
}

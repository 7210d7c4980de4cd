extension Invocation {
    /// Signals, memory pressure and exit codes: what an operator looks up.
    static func discussion(_ name: String) -> String {
        """
        Signals (systemctl kill -s SIGNAL \(name), or kill -s SIGNAL PID):
          SIGTERM, SIGINT  terminate: STOPPING=1, willTerminate (reverse order);
                           during launch, stop waiting and roll back
          SIGUSR1          toggle background/foreground (coalesces in a storm)
          SIGRTMIN+1       enter background (explicit, idempotent, queued)
          SIGRTMIN+2       enter foreground (explicit, idempotent, queued)
          SIGRTMIN+18      trim memory: a critical memory warning, malloc_trim
          SIGHUP           reload the config as one transaction
        Memory pressure: $MEMORY_PRESSURE_WATCH, else the cgroup's or the
        system's PSI file (/proc/pressure/memory).

        Exit codes: 0 clean exit, 1 launch failed (also a service that restart
        could not bring back), 64 wrong command line, 65 record-exit given values
        systemd never writes, or restart given a service the daemon does not have
        (EX_DATAERR), 69 no daemon on the bus (EX_UNAVAILABLE), 70 one of the
        daemon's own services failed (EX_SOFTWARE), 73 a file could not be written
        (EX_CANTCREAT), 75 state directory in use by another daemon (EX_TEMPFAIL),
        77 restart refused to an unprivileged caller (EX_NOPERM), 78 bad config
        (EX_CONFIG).
        """
    }

    /// The help text of `subcommand`, or of the command (nil), as `--help` prints it.
    static func help(for subcommand: Subcommand?, identity: DaemonIdentity) -> String {
        let name = identity.commandName
        var text = ""
        guard let subcommand else {
            text += "OVERVIEW: \(identity.abstract)\n\n"
            text += "USAGE: \(name) [<subcommand>] [<options>]\n\n"
            text += "OPTIONS:\n"
            text += row("--version", "Show the version.")
            text += row("-h, --help", "Show help information.")
            text += "\nSUBCOMMANDS:\n"
            for candidate in Subcommand.allCases {
                text += row(candidate == .run ? "run (default)" : candidate.rawValue, candidate.abstract)
            }
            text += "\n  See '\(name) help <subcommand>' for detailed help.\n\n"
            text += discussion(name) + "\n"
            return text
        }
        text += "OVERVIEW: \(subcommand.abstract)\n\n"
        text += "USAGE: \(usage(of: subcommand, command: name))\n\n"
        text += "OPTIONS:\n"
        for option in subcommand.options {
            let spelled = (option.short.map { "\($0), " } ?? "") + option.usage
            let help = option == .config
                ? "The config file (default: $\(identity.configVariable), else \(identity.defaultConfigPath))."
                : option.help
            text += row(spelled, help)
        }
        text += row("-h, --help", "Show help information.")
        return text
    }

    /// `apphostd check [--config <file>]`.
    static func usage(of subcommand: Subcommand, command name: String) -> String {
        ([name, subcommand.rawValue] + subcommand.options.map { "[\($0.usage)]" } + (subcommand.argument.map { ["<\($0)>"] } ?? [])).joined(separator: " ")
    }

    /// What a usage error prints: the error, the usage line, where to read more.
    package static func report(_ error: UsageError, identity: DaemonIdentity) -> String {
        let name = identity.commandName
        var text = "\(name): error: \(error.message)\n"
        if let subcommand = error.subcommand {
            text += "Usage: \(usage(of: subcommand, command: name))\n"
            text += "  See '\(name) help \(subcommand.rawValue)' for more.\n"
        } else {
            text += "Usage: \(name) [<subcommand>] [<options>]\n"
            text += "  See '\(name) --help' for more.\n"
        }
        return text
    }

    private static func row(_ label: String, _ help: String) -> String {
        let width = 26
        let padded = "  " + label
        if padded.count < width {
            return padded + String(repeating: " ", count: width - padded.count) + help + "\n"
        }
        return padded + "\n" + String(repeating: " ", count: width) + help + "\n"
    }
}

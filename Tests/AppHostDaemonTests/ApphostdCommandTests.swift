import AppHost
import Testing

@testable import AppHostDaemon

@Suite("The command line")
struct ApphostdCommandTests {
    @Test(
        "every spelling of run reads --config",
        arguments: [
            ([], nil), (["run"], nil),
            (["--config", "a.yaml"], "a.yaml"), (["-c", "a.yaml"], "a.yaml"), (["--config=a.yaml"], "a.yaml"),
            (["run", "--config", "/etc/x.yaml"], "/etc/x.yaml"), (["run", "-c", "x.yaml"], "x.yaml"),
            (["run", "--config=x.yaml"], "x.yaml"), (["--config", "run"], "run"), (["--config=-odd.yaml"], "-odd.yaml"),
        ] as [([String], String?)]
    )
    func runReadsConfig(arguments: [String], config: String?) throws {
        #expect(try Invocation.parse(arguments) == .run(config: config))
    }

    @Test("--config=VALUE takes a value that starts with a combining mark (a fuzzer's finding: the = and the mark are one Character)")
    func attachedValueStartingWithACombiningMark() throws {
        #expect(try Invocation.parse(["check", "--config=\u{030B}odd.yaml"]) == .check(config: "\u{030B}odd.yaml"))
        #expect(try Invocation.parse(["reload", "--pid=\u{0301}7"]) == .reload(pid: "\u{0301}7", config: nil, stateDirectory: nil))
    }

    @Test("the other subcommands, help and version")
    func otherCommands() throws {
        #expect(try Invocation.parse(["check"]) == .check(config: nil))
        #expect(try Invocation.parse(["check", "-c", "a.yaml"]) == .check(config: "a.yaml"))
        #expect(try Invocation.parse(["services"]) == .services)
        #expect(try Invocation.parse(["analytics", "--json"]) == .analytics(json: true, config: nil, stateDirectory: nil))
        #expect(try Invocation.parse(["analytics", "--state-directory", "/s", "--config=c.yaml"]) == .analytics(json: false, config: "c.yaml", stateDirectory: "/s"))
        #expect(try Invocation.parse(["--help"]) == .help(nil))
        #expect(try Invocation.parse(["-h"]) == .help(nil))
        #expect(try Invocation.parse(["help"]) == .help(nil))
        #expect(try Invocation.parse(["help", "check"]) == .help(.check))
        #expect(try Invocation.parse(["run", "--help"]) == .help(.run))
        #expect(try Invocation.parse(["analytics", "--json", "-h"]) == .help(.analytics))
        #expect(try Invocation.parse(["--version"]) == .version)
        #expect(try Invocation.parse(["status"]) == .status(json: false, bus: .system))
        #expect(try Invocation.parse(["status", "--json", "--user"]) == .status(json: true, bus: .user))
        #expect(try Invocation.parse(["status", "--watch"]) == .status(json: false, watch: true, bus: .system))
        #expect(try Invocation.parse(["restart", "notify/desktop", "--system"]) == .restart(service: "notify/desktop", bus: .system))
        #expect(try Invocation.parse(["restart", "--user", "logger"]) == .restart(service: "logger", bus: .user))
    }

    @Test(
        "a wrong command line says what is wrong and which usage applies",
        arguments: [
            (["--config"], "--config needs a value: --config <file>", Invocation.Subcommand.run),
            (["run", "--config"], "--config needs a value: --config <file>", .run),
            (["--config="], "--config needs a value: --config <file>", .run),
            (["-c", ""], "-c needs a value: --config <file>", .run),
            (["--config", "-x"], "--config needs a value: --config <file>", .run),
            (["--config", "a", "--config", "b"], "--config is given twice", .run),
            (["run", "run"], "unexpected argument 'run'", .run),
            (["--cnfig", "a.yaml"], "unknown option '--cnfig' for run (did you mean '--config'?)", .run),
            (["-c=a.yaml"], "unknown option '-c=a.yaml' for run", .run),
            (["a.yaml"], "unknown subcommand 'a.yaml' (subcommands: run, check, reload, status, restart, services, analytics, record-exit)", nil),
            (["chek"], "unknown subcommand 'chek' (did you mean 'check'?)", nil),
            (["services", "--config", "a.yaml"], "unknown option '--config' for services", .services),
            (["analytics", "--json=yes"], "--json takes no value", .analytics),
            (["check", "--version"], "unknown option '--version' for check", .check),
            (["restart"], "restart needs the service's name: restart <service>", .restart),
            (["restart", "a", "b"], "unexpected argument 'b'", .restart),
            (["status", "logger"], "unexpected argument 'logger'", .status),
            (["status", "--user", "--system"], "--user and --system exclude each other", .status),
            (["help", "nope"], "unknown subcommand 'nope' (subcommands: run, check, reload, status, restart, services, analytics, record-exit)", nil),
        ] as [([String], String, Invocation.Subcommand?)]
    )
    func usageErrors(arguments: [String], message: String, subcommand: Invocation.Subcommand?) {
        #expect(throws: Invocation.UsageError(message: message, subcommand: subcommand)) {
            try Invocation.parse(arguments)
        }
    }

    @Test("a usage error exits 64 with the usage line")
    func usageErrorExits64() {
        #expect(ApphostdCommand.run(["--cnfig", "a.yaml"]) == .usage)
        let report = Invocation.report(Invocation.UsageError(message: "--config is given twice", subcommand: .check), identity: .apphostd)
        #expect(report == """
            apphostd: error: --config is given twice
            Usage: apphostd check [--config <file>]
              See 'apphostd help check' for more.

            """)
    }

    @Test("help lists every subcommand and option, the signals and the exit codes")
    func helpText() {
        let root = Invocation.help(for: nil, identity: .apphostd)
        #expect(root.hasPrefix("OVERVIEW: Hosts pluggable application services"))
        #expect(root.contains("USAGE: apphostd [<subcommand>] [<options>]"))
        for subcommand in Invocation.Subcommand.allCases {
            #expect(root.contains("  \(subcommand.rawValue)"), "\(subcommand) is listed")
        }
        #expect(root.contains("run (default)"))
        #expect(root.contains("SIGRTMIN+1       enter background"))
        #expect(root.contains("64 wrong command line"))
        let codes = root.split(separator: "\n").drop { !$0.hasPrefix("Exit codes:") }.joined(separator: " ")
        for status in AppHostDaemon.ExitStatus.allCases {
            #expect(codes.contains(" \(status.rawValue) "), "exit code \(status.rawValue) (\(status)) is in --help")
        }
        let analytics = Invocation.help(for: .analytics, identity: .apphostd)
        #expect(analytics.contains("USAGE: apphostd analytics [--json] [--config <file>] [--state-directory <directory>]"))
        #expect(analytics.contains("  -c, --config <file>     The config file"))
        #expect(analytics.contains("  --state-directory <directory>\n"), "a long option's help goes on the next line")
    }

    @Test("a daemon of your own is named by its identity: help, usage errors, config path, variable and state directory")
    func ownIdentity() throws {
        let identity = DaemonIdentity(commandName: "kiosk-agent", version: "2.1.0", abstract: "Runs the kiosk's services.")
        #expect(identity.defaultConfigPath == "/etc/kiosk-agent/kiosk-agent.yaml")
        #expect(identity.configVariable == "KIOSK_AGENT_CONFIG")
        #expect(identity.stateDirectoryName == "kiosk-agent")
        let root = Invocation.help(for: nil, identity: identity)
        #expect(root.hasPrefix("OVERVIEW: Runs the kiosk's services.\n"))
        #expect(root.contains("USAGE: kiosk-agent [<subcommand>] [<options>]"))
        #expect(root.contains("systemctl kill -s SIGNAL kiosk-agent"))
        #expect(!root.contains("apphostd"))
        let check = Invocation.help(for: .check, identity: identity)
        #expect(check.contains("The config file (default: $KIOSK_AGENT_CONFIG, else /etc/kiosk-agent/kiosk-agent.yaml)."))
        #expect(!check.contains("apphostd"))
        let report = Invocation.report(Invocation.UsageError(message: "x", subcommand: nil), identity: identity)
        #expect(report.hasPrefix("kiosk-agent: error: x\n"))
        #expect(ConfigurationLoader.defaultStateDirectory(environment: ["HOME": "/home/k"], name: identity.stateDirectoryName) == "/home/k/.local/state/kiosk-agent")
        // Its own variable names its config; without one, its own default state directory.
        #expect(throws: InvalidConfiguration.self) {
            try AnalyticsCommand.stateDirectory(
                stateDirectory: nil, config: nil, environment: ["KIOSK_AGENT_CONFIG": "/nonexistent/k.yaml"],
                registry: makeTestRegistry(), identity: identity
            )
        }
        let fallback = try AnalyticsCommand.stateDirectory(
            stateDirectory: nil, config: nil, environment: ["XDG_STATE_HOME": "/s", "APPHOSTD_CONFIG": "/nonexistent/a.yaml"],
            registry: makeTestRegistry(), identity: identity
        )
        #expect(fallback.directory == "/s/kiosk-agent")
    }
}

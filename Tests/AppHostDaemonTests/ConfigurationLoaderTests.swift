import AppHost
import AppHostServices
import AppHostSystemd
import Logging
import Testing
@testable import AppHostDaemon

@Suite("ConfigurationLoader")
struct ConfigurationLoaderTests {
    let loader = ConfigurationLoader(registry: makeTestRegistry(), environment: ["STATE_DIRECTORY": "/var/lib/apphostd:/var/lib/other"])

    @Test func minimalFileGetsEveryDefault() throws {
        let configuration = try loader.load(text: "services:\n  - logger\n", file: "min.yaml")
        #expect(configuration.file == "min.yaml")
        #expect(configuration.hookDeadline == .seconds(5))
        #expect(configuration.launchDeadline == .seconds(30))
        #expect(configuration.terminateDeadline == .seconds(10))
        #expect(configuration.logLevel == .info)
        #expect(configuration.stateDirectory == "/var/lib/apphostd")
        #expect(configuration.memoryPressure == .init(enabled: true, warningStall: .milliseconds(200), criticalStall: .milliseconds(800), window: .seconds(2)))
        #expect(configuration.metrics.textfile == nil, "no metrics file unless the config names one")
        #expect(configuration.followsLogind, "logind is followed unless the config says host.logind: false")
        #expect(configuration.followsTimeChanges, "time changes are followed unless the config says host.time-changes: false")
        #expect(configuration.networkPathSource == .automatic, "the network path is followed from NetworkManager or networkd unless the config says otherwise")
        #expect(configuration.followsPowerState, "the power state is followed unless the config says host.power: false")
        #expect(configuration.services.map(\.name) == ["logger"])
        #expect(configuration.services[0].type == "logger")
        #expect(configuration.services[0].isRequired == false)
        #expect(configuration.services[0].line == 2)
    }

    @Test("host.metrics: the textfile, and the daemon label as set or from the file's base name")
    func metricsSettings() throws {
        let named = try loader.load(text: "host:\n  metrics:\n    textfile: /run/m/kiosk-3.prom\nservices:\n  - logger\n", file: "m.yaml")
        #expect(named.metrics.textfile == "/run/m/kiosk-3.prom")
        #expect(named.metrics.daemonLabel == "kiosk-3")
        let labelled = try loader.load(text: "host:\n  metrics:\n    textfile: /run/m/a.prom\n    daemon: front desk\nservices:\n  - logger\n", file: "m.yaml")
        #expect(labelled.metrics.daemonLabel == "front desk")
        let errors = #expect(throws: InvalidConfiguration.self) {
            try loader.load(text: "host:\n  metrics:\n    textfile: /run/m/.prom\n    daemon: \"a\\tb\"\nservices:\n  - logger\n", file: "m.yaml")
        }
        #expect(errors?.errors.map(\.keyPath) == ["host.metrics.textfile", "host.metrics.daemon"], "every problem at once")
    }

    @Test("host.logind: false turns logind off; anything but a boolean is refused with what to write")
    func logindSetting() throws {
        let off = try loader.load(text: "host:\n  logind: false\nservices:\n  - logger\n", file: "l.yaml")
        #expect(!off.followsLogind)
        let errors = #expect(throws: InvalidConfiguration.self) {
            try loader.load(text: "host:\n  logind: sometimes\nservices:\n  - logger\n", file: "l.yaml")
        }
        #expect(errors?.errors.map(\.keyPath) == ["host.logind"])
    }

    @Test("host.time-changes: false turns time changes off; anything but a boolean is refused with what to write")
    func timeChangesSetting() throws {
        let off = try loader.load(text: "host:\n  time-changes: false\nservices:\n  - logger\n", file: "t.yaml")
        #expect(!off.followsTimeChanges)
        let errors = #expect(throws: InvalidConfiguration.self) {
            try loader.load(text: "host:\n  time-changes: daily\nservices:\n  - logger\n", file: "t.yaml")
        }
        #expect(errors?.errors.map(\.keyPath) == ["host.time-changes"])
        #expect(errors?.description.contains("true or false") == true, "\(errors.map { "\($0)" } ?? "")")
    }

    @Test("host.network: auto, networkd, networkmanager, or false (not followed)", arguments: [
        ("auto", NetworkPathSource?.some(.automatic)), ("networkd", .networkd), ("networkmanager", .networkManager), ("false", nil),
    ])
    func networkSetting(text: String, source: NetworkPathSource?) throws {
        let configuration = try loader.load(text: "host:\n  network: \(text)\nservices:\n  - logger\n", file: "t.yaml")
        #expect(configuration.networkPathSource == source)
    }

    @Test("host.network and host.power: anything else is refused with what to write, each key named", arguments: [
        ("network: wifi", "host.network", "auto (NetworkManager, else systemd-networkd), networkd, networkmanager, or false"),
        ("network: true", "host.network", "true names no source"),
        ("network: 3", "host.network", "found an integer"),
        ("network: NetworkManager", "host.network", "\"NetworkManager\" names no source"),
        ("power: saver", "host.power", "true or false"),
    ])
    func conditionSettingsRefused(line: String, key: String, says: String) throws {
        let errors = #expect(throws: InvalidConfiguration.self) {
            try loader.load(text: "host:\n  \(line)\nservices:\n  - logger\n", file: "t.yaml")
        }
        #expect(errors?.errors.map(\.keyPath) == [key])
        #expect(errors?.description.contains(says) == true, "\(errors.map { "\($0)" } ?? "")")
    }

    @Test("host.power: false turns the power state off")
    func powerSetting() throws {
        #expect(try !loader.load(text: "host:\n  power: false\nservices:\n  - logger\n", file: "t.yaml").followsPowerState)
    }

    @Test("host.logind-session: auto by default, user:NAME, or a session id; anything else is refused with what to write", arguments: [
        ("user:tester", "user:tester"), ("c1", "c1"), ("3", "3"), ("auto", "auto"),
    ])
    func logindSessionSetting(text: String, read: String) throws {
        let configuration = try loader.load(text: "host:\n  logind-session: \(text)\nservices:\n  - logger\n", file: "l.yaml")
        #expect(configuration.logindSession.description == read)
        #expect(try loader.load(text: "services:\n  - logger\n", file: "l.yaml").logindSession == .auto)
    }

    @Test(arguments: ["user:", "user:Root", "3/4", "", "seat0 "])
    func logindSessionRefused(text: String) throws {
        let errors = #expect(throws: InvalidConfiguration.self) {
            try loader.load(text: "host:\n  logind-session: \"\(text)\"\nservices:\n  - logger\n", file: "l.yaml")
        }
        #expect(errors?.errors.first?.message.contains("names no session") == true, "\(String(describing: errors))")
    }

    @Test func everyKeyIsRead() throws {
        let text = """
            host:
              hook-deadline: 250ms
              launch-deadline: 2m
              terminate-deadline: 1.5s
              state-directory: /srv/state
              log-level: debug
              memory-pressure:
                enabled: false
                warning-stall: 100ms
                critical-stall: 1s
                window: 4s
            services:
              - logger
              - name: nightly
                type: checked
                required: true
                deadline: 7
                launch-deadline: 1h
                settings:
                  level: high
                  count: 3
            """
        let configuration = try loader.load(text: text, file: "full.yaml")
        #expect(configuration.hookDeadline == .milliseconds(250))
        #expect(configuration.launchDeadline == .seconds(120))
        #expect(configuration.terminateDeadline == .milliseconds(1500))
        #expect(configuration.stateDirectory == "/srv/state")
        #expect(configuration.logLevel == .debug)
        #expect(configuration.memoryPressure == .init(enabled: false, warningStall: .milliseconds(100), criticalStall: .seconds(1), window: .seconds(4)))
        let nightly = configuration.services[1]
        #expect(nightly.name == "nightly")
        #expect(nightly.type == "checked")
        #expect(nightly.isRequired)
        #expect(nightly.deadline == .seconds(7))
        #expect(nightly.launchDeadline == .seconds(3600))
        #expect(nightly.line == 14)
        #expect(nightly.settings.keyPath == "services[1].settings")
        #expect(nightly.settings.file == "full.yaml")
        #expect(nightly.settings.values == ["level": .string("high"), "count": .int(3)])
        #expect(nightly.settings.lines["services[1].settings.level"] == 20)
        #expect(nightly.settings.lines["services[1].settings.count"] == 21)
        #expect(nightly.settings.lines["host.log-level"] == nil, "a service sees only its own section's lines")
    }

    @Test func typeDefaultsToNameAndNameToType() throws {
        let configuration = try loader.load(text: "services:\n  - name: analytics\n  - type: logger\n", file: "f")
        #expect(configuration.services.map(\.name) == ["analytics", "logger"])
        #expect(configuration.services.map(\.type) == ["analytics", "logger"])
    }

    @Test func scalarsFollowTheCoreSchema() throws {
        let text = """
            services:
              - name: a
                type: checked
                settings: {level: "high", count: 0x0A}
            """
        let configuration = try loader.load(text: text, file: "f")
        #expect(configuration.services[0].settings.values["count"] == .int(10))
        // "yes" is YAML 1.1's true; under the core schema it is a string, so a bool key refuses it.
        let error = configurationError { () throws(InvalidConfiguration) in
            try loader.load(text: "services:\n  - name: logger\n    required: on\n", file: "f")
        }
        #expect(error?.keyPath == "services[0].required")
        #expect(error?.message == "expected true or false, found a string")
    }

    @Test func quotedNumbersStayStrings() throws {
        let error = configurationError { () throws(InvalidConfiguration) in
            try loader.load(text: "services:\n  - name: c\n    type: checked\n    settings:\n      count: \"3\"\n", file: "q.yaml")
        }
        #expect(error?.description == "q.yaml:5: services[0].settings.count: expected an integer, found a string (write it without quotes: 3, not \"3\"; in a test's settings dictionary too: [\"count\": 3])")
    }

    @Test func errorsCarryFileLineKeyAndHint() throws {
        let error = configurationError { () throws(InvalidConfiguration) in
            try loader.load(text: "host:\n  log-level: loud\nservices:\n  - logger\n", file: "/etc/apphostd/apphostd.yaml")
        }
        #expect(error?.description == "/etc/apphostd/apphostd.yaml:2: host.log-level: \"loud\" is not valid (expected one of trace, debug, info, notice, warning, error, critical)")
    }

    @Test func unknownServiceNamesTheRegistry() throws {
        let error = configurationError { () throws(InvalidConfiguration) in
            try loader.load(text: "services:\n  - logger\n  - name: x\n    type: nope\n", file: "f")
        }
        #expect(error?.keyPath == "services[1].type")
        #expect(error?.line == 4)
        #expect(error?.hint == "known services: analytics, checked, logger, notification, session-lock")
    }

    @Test func eachServiceIsBuiltOnceToValidate() throws {
        let counter = FactoryCounter()
        let loader = ConfigurationLoader(registry: makeTestRegistry(counter: counter), environment: [:])
        let configuration = try loader.load(text: "services:\n  - logger\n  - analytics\n  - session-lock\n", file: "f")
        #expect(counter.value == 3)
        let descriptors = configuration.serviceDescriptors(registry: makeTestRegistry(counter: counter))
        #expect(descriptors.map(\.name) == ["logger", "analytics", "session-lock"])
        #expect(descriptors.allSatisfy { !$0.isRequired })
        #expect(counter.value == 3, "making descriptors builds nothing")
        _ = try descriptors[0].makeService()
        #expect(counter.value == 4)
    }

    @Test func descriptorsCarryOverrides() throws {
        let configuration = try loader.load(text: "services:\n  - name: c\n    type: checked\n    required: true\n    deadline: 2s\n    launch-deadline: 9s\n    settings: {count: 4}\n", file: "f")
        let descriptor = try #require(configuration.serviceDescriptors(registry: makeTestRegistry()).first)
        #expect(descriptor.name == "c")
        #expect(descriptor.type == "checked")
        #expect(descriptor.isRequired)
        #expect(descriptor.deadline == .seconds(2))
        #expect(descriptor.launchDeadline == .seconds(9))
        #expect(descriptor.configuration.values == ["count": .int(4)])
        let service = try #require(try descriptor.makeService() as? CheckedService)
        #expect(service.count == 4)
    }

    @Test(arguments: [
        (["STATE_DIRECTORY": "/var/lib/apphostd:/var/lib/more", "XDG_STATE_HOME": "/x", "HOME": "/home/u"], "/var/lib/apphostd"),
        (["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"], "/x/state/apphostd"),
        (["XDG_STATE_HOME": "relative", "HOME": "/home/u"], "/home/u/.local/state/apphostd"),
        (["HOME": "/home/u"], "/home/u/.local/state/apphostd"),
        ([:], "/var/lib/apphostd"),
    ])
    func stateDirectoryFallsBackThroughTheEnvironment(environment: [String: String], expected: String) throws {
        let loader = ConfigurationLoader(registry: makeTestRegistry(), environment: environment)
        #expect(try loader.load(text: "services: [logger]", file: "f").stateDirectory == expected)
        let explicit = try loader.load(text: "host: {state-directory: /srv/a}\nservices: [logger]", file: "f")
        #expect(explicit.stateDirectory == "/srv/a")
    }

    @Test func hugeTextIsRefusedBeforeParsing() {
        let text = "services:\n  - logger\n" + String(repeating: "# padding\n", count: 110_000)
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(text: text, file: "big.yaml") }
        #expect(error?.message.contains("too large") == true)
    }

    @Test func shippedConfigLoadsWithTheRealRegistry() throws {
        let path = PackagePaths.root + "/config/apphostd.yaml"
        let loader = ConfigurationLoader(registry: BuiltinServices.registry(), environment: ["STATE_DIRECTORY": "/var/lib/apphostd"])
        let configuration = try loader.load(path: path)
        #expect(configuration.services.map(\.name) == ["logger", "analytics", "session-lock", "notification"])
        #expect(configuration.services.map(\.isRequired) == [true, false, false, false])
        #expect(configuration.hookDeadline == .seconds(5))
        #expect(configuration.launchDeadline == .seconds(30))
        #expect(configuration.terminateDeadline == .seconds(10))
        #expect(configuration.logLevel == .info)
        #expect(configuration.memoryPressure == DaemonConfiguration.MemoryPressure())
        #expect(configuration.stateDirectory == "/var/lib/apphostd")
    }

    @Test("a name without type: that is no service type is reported at the name the user wrote")
    func nameStandingInForTypeIsBlamedAtName() {
        let text = "services:\n  - logger\n  - name: hb\n    settings:\n      interval: 1s\n"
        let error = configurationError { () throws(InvalidConfiguration) in try loader.load(text: text, file: "hb.yaml") }
        #expect(error?.keyPath == "services[1].name")
        #expect(error?.line == 3)
        #expect(error?.message == "unknown service \"hb\"")
        #expect(error?.hint?.hasPrefix("without type:, the name is the service type; add type: with one of the known services: ") == true, "\(String(describing: error))")
    }

    @Test("apphostd analytics without a config file reads the default state directory and says so")
    func analyticsWithoutAConfigUsesTheDefaultStateDirectory() throws {
        let missing = "/nonexistent-\(UInt32.random(in: 0...UInt32.max))/apphostd.yaml"
        let environment = ["XDG_STATE_HOME": "/home/u/.state"]
        let identity = DaemonIdentity(commandName: "apphostd", version: "0", abstract: "", defaultConfigPath: missing)
        let (directory, note) = try AnalyticsCommand.stateDirectory(
            stateDirectory: nil, config: nil, environment: environment, registry: makeTestRegistry(), identity: identity
        )
        #expect(directory == "/home/u/.state/apphostd")
        #expect(note == "no config at \(missing); reading the default state directory /home/u/.state/apphostd")
        // A config asked for by name must exist: no silent fallback.
        #expect(throws: InvalidConfiguration.self) {
            try AnalyticsCommand.stateDirectory(stateDirectory: nil, config: missing, environment: environment, registry: makeTestRegistry())
        }
        #expect(throws: InvalidConfiguration.self) {
            try AnalyticsCommand.stateDirectory(stateDirectory: nil, config: nil, environment: ["APPHOSTD_CONFIG": missing], registry: makeTestRegistry())
        }
        #expect(try AnalyticsCommand.stateDirectory(stateDirectory: "/s", config: missing, environment: [:], registry: makeTestRegistry()).directory == "/s")
    }
}

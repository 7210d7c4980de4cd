import AppHost
import AppHostTestSupport
import Synchronization
import Testing

@Suite struct ServiceRegistryTests {
    struct Nothing: ApplicationService {}

    func registry() -> ServiceRegistry {
        var registry = ServiceRegistry()
        registry.register("logger", summary: "audit trail") { Nothing() }
        registry.register("analytics", summary: "usage") { configuration in
            try configuration.requireOnlyKeys(["flush"])
            _ = try configuration.duration("flush")
            return Nothing()
        }
        registry.register("flaky") { _ in throw TestError(description: "disk on fire") }
        return registry
    }

    @Test func unknownTypeListsKnownNames() {
        let error = #expect(throws: ConfigurationError.self) {
            try registry().makeService(type: "loger", configuration: ServiceSection(file: "/etc/a.yaml"), keyPath: "services[0].type", line: 7)
        }
        #expect(error?.message == "unknown service \"loger\"")
        #expect(error?.hint == "known services: analytics, flaky, logger")
        #expect(error?.description == "/etc/a.yaml:7: services[0].type: unknown service \"loger\" (known services: analytics, flaky, logger)")
    }

    @Test func factoryErrorsBecomeConfigurationErrors() {
        let settings = ServiceSection(["flush": .string("soon")], keyPath: "services[1].settings")
        let typed = #expect(throws: ConfigurationError.self) {
            try registry().makeService(type: "analytics", configuration: settings)
        }
        #expect(typed?.keyPath == "services[1].settings.flush")
        #expect(typed?.message == "\"soon\" is not a duration")

        let other = #expect(throws: ConfigurationError.self) {
            try registry().makeService(type: "flaky", configuration: ServiceSection(keyPath: "services[2].settings"))
        }
        #expect(other?.keyPath == "services[2].settings")
        #expect(other?.message == "disk on fire")
    }

    @Test func settingsFreeTypesRefuseKeys() {
        let error = #expect(throws: ConfigurationError.self) {
            try registry().makeService(type: "logger", configuration: ServiceSection(["level": .string("debug")]))
        }
        #expect(error?.message == "unknown key")
        #expect(error?.keyPath == "settings.level")
    }

    @Test("a type registered with its setting keys has every unknown key reported before its factory runs")
    func registeredSettingKeysReportEveryUnknownKey() throws {
        var registry = ServiceRegistry()
        let factoryRuns = Mutex(0)
        registry.register("timer", settingKeys: ["interval", "jitter"]) { configuration in
            factoryRuns.withLock { $0 += 1 }
            try configuration.requireOnlyKeys(["interval", "jitter"])
            return Nothing()
        }
        let settings = ServiceSection(["intervall": .string("5s"), "mode": .string("fast"), "jitter": .string("1s")], keyPath: "services[0].settings")
        guard case .failure(let invalid) = registry.build(type: "timer", configuration: settings) else {
            Issue.record("built with two unknown keys")
            return
        }
        #expect(invalid.errors.map(\.keyPath) == ["services[0].settings.intervall", "services[0].settings.mode"])
        #expect(invalid.errors.first?.hint == "did you mean interval? valid keys: interval, jitter")
        #expect(factoryRuns.withLock { $0 } == 0)
        // The throwing API still names the first.
        let first = #expect(throws: ConfigurationError.self) { try registry.makeService(type: "timer", configuration: settings) }
        #expect(first?.keyPath == "services[0].settings.intervall")
        #expect(try registry.makeService(type: "timer", configuration: ServiceSection(["interval": .string("5s")])) is Nothing)
        #expect(factoryRuns.withLock { $0 } == 1)
    }

    @Test func listsAndBuilds() throws {
        let registry = registry()
        #expect(registry.entriesByName.map(\.name) == ["analytics", "flaky", "logger"])
        #expect(registry.entriesByName.last?.summary == "audit trail")
        #expect(registry.contains("logger"))
        #expect(!registry.contains("exec"))
        #expect(try registry.makeService(type: "analytics", configuration: ServiceSection(["flush": .string("5s")])) is Nothing)
    }

    @Test func descriptorFromRegistryFailsLaunchWhenRequired() async throws {
        let descriptor = ServiceDescriptor(name: "x", type: "nope", isRequired: true, configuration: .empty, registry: registry())
        let host = try PluggableApplicationHost(services: [descriptor], logger: quietLogger)
        try await host.withRunning {
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure?.service == "x")
            #expect(failure?.errnoValue == 22)
            #expect(failure?.description.contains("unknown service \"nope\"") == true)
        }
    }
}

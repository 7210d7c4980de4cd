import AppHost
import AppHostTestSupport
import AppHostServices
import Testing
@testable import AppHostDaemon

/// The README's "Write your own service" example, kept compiling and working: a user type
/// registered next to the built-ins is configured, validated and launched like them.
struct CustomServiceTests {
    struct Heartbeat: ApplicationService {
        let interval: Duration

        init(configuration: ServiceSection) throws(ConfigurationError) {
            try configuration.requireOnlyKeys(["interval"])
            interval = try configuration.duration("interval") ?? .seconds(30)
        }

        func application(_ app: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            app.logger.info("launch #\(options.launchCount), previous exit: \(options.previousExit)")
            return true
        }
    }

    static func registry() -> ServiceRegistry {
        var registry = BuiltinServices.registry()
        registry.register("heartbeat", summary: "Logs a heartbeat") { try Heartbeat(configuration: $0) }
        return registry
    }

    @Test func registeredTypeLoadsWithItsSettingsAndLaunches() async throws {
        let loader = ConfigurationLoader(registry: Self.registry(), environment: [:])
        let configuration = try loader.load(
            text: "host: {state-directory: /tmp/unused}\nservices:\n  - name: heartbeat\n    settings: {interval: 10s}\n",
            file: "custom.yaml")
        let descriptors = configuration.serviceDescriptors(registry: Self.registry())
        #expect(descriptors.map(\.name) == ["heartbeat"])
        let service = try #require(try descriptors[0].makeService() as? Heartbeat)
        #expect(service.interval == .seconds(10))

        let host = try PluggableApplicationHost(services: descriptors)
        try await host.withRunning {
            try await host.launched()
            #expect(host.state == .active)
        }
    }

    @Test func registeredTypeRefusesUnknownSettingsWithTheValidKeys() {
        let loader = ConfigurationLoader(registry: Self.registry(), environment: [:])
        let error = configurationError { () throws(InvalidConfiguration) in
            try loader.load(text: "services:\n  - name: heartbeat\n    settings: {intervall: 10s}\n", file: "custom.yaml")
        }
        #expect(error?.description.contains("services[0].settings.intervall: unknown key") == true, "\(String(describing: error))")
        #expect(error?.description.contains("interval") == true)
    }
}

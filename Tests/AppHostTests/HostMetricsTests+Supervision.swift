@testable import AppHost
import AppHostTestKit
import AppHostTestSupport
import CoreMetrics
import Prometheus
import Testing

/// Supervision's figures: `apphost_service_restarts_total{service}` and where
/// `apphost_services{status}` counts a service while it restarts and once its restarts gave way.
extension HostMetricsTests {
    static func configuration(_ registry: PrometheusCollectorRegistry) -> PluggableApplicationHost.Configuration {
        .init(hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), metricsFactory: PrometheusMetricsFactory(registry: registry))
    }

    /// `apphost_services{status}` by status.
    static func servicesByStatus(_ registry: PrometheusCollectorRegistry) -> [String: String] {
        let values = prometheusSamples(registry.emitToString())
        return Dictionary(uniqueKeysWithValues: ["running", "restarting", "failed", "disabled"].map {
            ($0, values[#"apphost_services{status="\#($0)"}"#] ?? "absent")
        })
    }

    @Test("each restart is counted for its service, and a service waiting for one is restarting, not running")
    func restartsAreCounted() async throws {
        let registry = PrometheusCollectorRegistry()
        let services = [
            SupervisionTests.descriptor("outbox", FlakyRunLoop(failures: 2), restart: SupervisionTests.policy(.transient)),
            SupervisionTests.descriptor("slow", FlakyRunLoop(failures: 1), restart: SupervisionTests.policy(.transient, delay: .seconds(30))),
            ServiceDescriptor(name: "other", service: Idle()),
        ]
        try await withTestHost(services, configuration: Self.configuration(registry)) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            _ = await restarts.first { $0.service == "outbox" && $0.restarts == 2 }
            _ = await host.logs.first { $0.message.hasPrefix("slow restarting in") }
            // A barrier: its request publishes the status the restarts left.
            _ = try await host.receiveMemoryWarning()
            let values = prometheusSamples(registry.emitToString())
            #expect(values[#"apphost_service_restarts_total{service="outbox"}"#] == "2")
            #expect(values[#"apphost_service_restarts_total{service="slow"}"#] == "0")
            #expect(values[#"apphost_service_restarts_total{service="other"}"#] == "0")
            #expect(Self.servicesByStatus(registry) == ["running": "2.0", "restarting": "1.0", "failed": "0.0", "disabled": "0.0"])
        }
    }

    @Test("a service whose restarts gave way is failed, optional (then disabled) or required, and not also disabled")
    func failedServices() async throws {
        struct Unbuildable: Error {}
        let registry = PrometheusCollectorRegistry()
        let services = [
            SupervisionTests.descriptor("optional", FlakyRunLoop(), required: false, restart: SupervisionTests.policy(.transient, delay: .milliseconds(1), intensity: 2)),
            SupervisionTests.descriptor("required", FlakyRunLoop(), restart: SupervisionTests.policy(.permanent, delay: .milliseconds(1), intensity: 1)),
            ServiceDescriptor(name: "broken", isRequired: false) { throw Unbuildable() },
            ServiceDescriptor(name: "other", service: Idle()),
        ]
        try await withTestHost(services, configuration: Self.configuration(registry)) { host in
            try await host.launched()
            _ = try await host.waitForCall(.willTerminate, of: "optional")
            _ = await host.logs.first { $0.message.hasPrefix("unhealthy: required failed") }
            _ = try await host.receiveMemoryWarning()
            let values = prometheusSamples(registry.emitToString())
            #expect(values[#"apphost_service_restarts_total{service="optional"}"#] == "2")
            #expect(values[#"apphost_service_restarts_total{service="required"}"#] == "1")
            #expect(Self.servicesByStatus(registry) == ["running": "1.0", "restarting": "0.0", "failed": "2.0", "disabled": "1.0"])
        }
    }

    @Test("an instance restart's new instance counts on in the same series")
    func instanceRestartsCountOn() async throws {
        let registry = PrometheusCollectorRegistry()
        // Each instance is this one object: its first two starts throw, whichever instance made them.
        let flaky = FlakyRunLoop(failures: 2)
        var cache = ServiceDescriptor(name: "cache") { flaky }
        cache.restart = SupervisionTests.policy(.transient, delay: .milliseconds(1), scope: .instance)
        try await withTestHost([cache], configuration: Self.configuration(registry)) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            #expect(await restarts.first { $0.restarts == 2 } != nil)
            _ = try await host.receiveMemoryWarning()
            #expect(host.events(of: "cache").filter { $0 == .willTerminate }.count == 2, "two instances were replaced")
            // The second instance's run loop ended during its catch-up: announced all the same.
            #expect(restarts.all.map(\.restarts) == [1, 2])
            #expect(prometheusSamples(registry.emitToString())[#"apphost_service_restarts_total{service="cache"}"#] == "2")
        }
    }

    @Test("the services' counts follow each new list, also after the same health came in another list")
    func countsFollowEachList() {
        let registry = PrometheusCollectorRegistry()
        let metrics = HostMetrics(factory: PrometheusMetricsFactory(registry: registry))
        let running = ["a", "b", "c"].map { ServiceHealth(name: $0, isRequired: true, condition: .healthy) }
        var status = HostStatus(state: .active, services: running)
        metrics.show(status)
        #expect(Self.servicesByStatus(registry) == ["running": "3.0", "restarting": "0.0", "failed": "0.0", "disabled": "0.0"])
        // Equal, in a list of its own: what the loop hands over after a service changed and changed back.
        status.services = running.map { $0 }
        metrics.show(status)
        var changed = status.services
        changed[0].pendingRestart = RestartAttempt(count: 1, intensity: 5, period: .seconds(60))
        changed[1].failure = "failed 6 times in 60s"
        changed[2].condition = .disabled(reason: "not launched")
        status.services = changed
        metrics.show(status)
        #expect(Self.servicesByStatus(registry) == ["running": "0.0", "restarting": "1.0", "failed": "1.0", "disabled": "1.0"])
        status.services = running
        metrics.show(status)
        #expect(Self.servicesByStatus(registry) == ["running": "3.0", "restarting": "0.0", "failed": "0.0", "disabled": "0.0"])
    }
}

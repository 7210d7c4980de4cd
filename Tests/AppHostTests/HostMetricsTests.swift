@testable import AppHost
import AppHostTestSupport
import CoreMetrics
import Prometheus
import Testing

/// The samples of `registry`'s text format.
private func samples(_ registry: PrometheusCollectorRegistry) -> [String: String] {
    prometheusSamples(registry.emitToString())
}

@Suite struct HostMetricsTests {
    @Test("a composite's children are counted and timed by their path; a first-of's passed-over child is not a running service")
    func compositeChildrenByPath() async throws {
        let journal = Journal()
        let registry = PrometheusCollectorRegistry()
        let notify = ServiceDescriptor(name: "notify", composite: ServiceComposite(.firstOf, children: [
            descriptor(Recorder(name: "desktop", journal: journal, willFinish: .refuse)), descriptor(Recorder(name: "journal", journal: journal)),
        ]))
        let host = try PluggableApplicationHost(services: [notify], configuration: .init(metricsFactory: PrometheusMetricsFactory(registry: registry)), logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            let values = samples(registry)
            #expect(values[#"apphost_services{status="running"}"#] == "1.0")
            #expect(values[#"apphost_hook_duration_seconds_count{service="notify/journal",hook="applicationDidBecomeActive"}"#] == "1")
            #expect(values[#"apphost_hook_duration_seconds_count{service="notify/desktop",hook="applicationWillFinishLaunching"}"#] == "1")
        }
    }

    @Test("the host's figures follow what it did: state, services, hooks, memory warnings, reloads")
    func figuresFollowTheRequests() async throws {
        let journal = Journal()
        let registry = PrometheusCollectorRegistry()
        let host = try PluggableApplicationHost(
            services: [descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "b", journal: journal))],
            configuration: .init(metricsFactory: PrometheusMetricsFactory(registry: registry)),
            logger: quietLogger
        )
        try await host.withRunning {
            try await host.launched()
            var values = samples(registry)
            #expect(values[#"apphost_state{state="active"}"#] == "1.0")
            #expect(values[#"apphost_state{state="launching"}"#] == "0.0")
            #expect(values[#"apphost_state{state="notRunning"}"#] == "0.0")
            #expect(values[#"apphost_services{status="running"}"#] == "2.0")
            #expect(values[#"apphost_healthy"#] == "1.0")
            #expect(values[#"apphost_session_locked"#] == "0.0")
            #expect(values[#"apphost_hook_duration_seconds_count{service="b",hook="applicationWillFinishLaunching"}"#] == "1")
            #expect(values[#"apphost_hook_duration_seconds_count{service="a",hook="applicationDidBecomeActive"}"#] == "1")

            #expect(try await host.enterBackground())
            try await host.receiveMemoryWarning(level: .critical)
            try await host.setSessionLocked(true)
            _ = try await host.reload([descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "b", journal: journal))])
            await #expect(throws: InvalidConfiguration.self) {
                try await host.reload([descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "a", journal: journal))])
            }
            values = samples(registry)
            #expect(values[#"apphost_state{state="background"}"#] == "1.0")
            #expect(values[#"apphost_state{state="active"}"#] == "0.0")
            #expect(values[#"apphost_session_locked"#] == "1.0")
            #expect(values[#"apphost_memory_warnings_total{level="critical"}"#] == "1")
            #expect(values[#"apphost_memory_warnings_total{level="warning"}"#] == "0")
            #expect(values[#"apphost_reloads_total{result="applied"}"#] == "1")
            #expect(values[#"apphost_reloads_total{result="refused"}"#] == "1")
            #expect(values[#"apphost_hook_duration_seconds_count{service="a",hook="applicationDidReceiveMemoryWarning"}"#] == "1")
        }
        let values = samples(registry)
        #expect(values[#"apphost_state{state="notRunning"}"#] == "1.0")
        #expect(values[#"apphost_state{state="background"}"#] == "0.0")
        #expect(values[#"apphost_hook_duration_seconds_count{service="a",hook="applicationWillTerminate"}"#] == "1")
    }

    @Test("the machine's conditions: unknown at the start, then each change in its gauges")
    func conditionGauges() async throws {
        let journal = Journal()
        let registry = PrometheusCollectorRegistry()
        let host = try PluggableApplicationHost(
            services: [descriptor(Recorder(name: "a", journal: journal))], configuration: .init(metricsFactory: PrometheusMetricsFactory(registry: registry)), logger: quietLogger
        )
        try await host.withRunning {
            try await host.launched()
            var values = samples(registry)
            #expect(values[#"apphost_network{status="unknown"}"#] == "1.0")
            #expect(values[#"apphost_network{status="available"}"#] == "0.0")
            #expect(values[#"apphost_low_power_mode"#] == "0.0")
            #expect(values[#"apphost_battery_warning{level="unknown"}"#] == "1.0")
            await host.updateNetworkPath(NetworkPath(status: .unavailable, isExpensive: true))
            await host.updatePowerState(PowerState(isLowPowerModeEnabled: true, isOnBattery: true, batteryWarningLevel: .critical))
            values = samples(registry)
            #expect(values[#"apphost_network{status="unavailable"}"#] == "1.0")
            #expect(values[#"apphost_network{status="unknown"}"#] == "0.0")
            #expect(values[#"apphost_network_expensive"#] == "1.0")
            #expect(values[#"apphost_low_power_mode"#] == "1.0")
            #expect(values[#"apphost_on_battery"#] == "1.0")
            #expect(values[#"apphost_battery_warning{level="critical"}"#] == "1.0")
            #expect(values[#"apphost_battery_warning{level="unknown"}"#] == "0.0")
        }
    }

    @Test("an overrun is counted for its service, and the hook's time is recorded when it returns")
    func overrunsAreCounted() async throws {
        let journal = Journal()
        let latch = Latch()
        let registry = PrometheusCollectorRegistry()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "fast", journal: journal)),
                descriptor(Recorder(name: "slow", journal: journal, hangs: ["didEnterBackground": latch]), deadline: .milliseconds(50)),
            ],
            configuration: .init(stallLimit: .seconds(3600), metricsFactory: PrometheusMetricsFactory(registry: registry)),
            logger: quietLogger
        )
        try await host.withRunning {
            defer { latch.open() }
            try await host.launched()
            #expect(try await host.enterBackground())
            var values = samples(registry)
            #expect(values[#"apphost_hook_overruns_total{service="slow"}"#] == "1")
            #expect(values[#"apphost_hook_overruns_total{service="fast"}"#] == "0")
            #expect(values[#"apphost_hook_duration_seconds_count{service="slow",hook="applicationDidEnterBackground"}"#] == nil)
            latch.open()
            #expect(await journal.wait(for: "slow:didEnterBackground"))
            try await host.enterForeground()
            values = samples(registry)
            #expect(values[#"apphost_hook_duration_seconds_count{service="slow",hook="applicationDidEnterBackground"}"#] == "1")
            let seconds = Double(values[#"apphost_hook_duration_seconds_sum{service="slow",hook="applicationDidEnterBackground"}"#] ?? "") ?? 0
            #expect(seconds >= 0.05, "the late hook's time is its whole time: \(seconds)")
        }
    }

    @Test("a service records its own figures through its handle's factory, beside the host's")
    func servicesRecordThroughTheHandle() async throws {
        struct Counting: ApplicationService {
            func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
                CoreMetrics.Counter(label: "uploads_total", dimensions: [("service", application.serviceName)], factory: application.metricsFactory).increment()
            }
        }
        let registry = PrometheusCollectorRegistry()
        let host = try PluggableApplicationHost(
            services: [ServiceDescriptor(name: "uploader", service: Counting())],
            configuration: .init(metricsFactory: PrometheusMetricsFactory(registry: registry)),
            logger: quietLogger
        )
        try await host.withRunning {
            try await host.launched()
            #expect(try await host.enterBackground())
            #expect(samples(registry)[#"uploads_total{service="uploader"}"#] == "1")
        }
    }
}

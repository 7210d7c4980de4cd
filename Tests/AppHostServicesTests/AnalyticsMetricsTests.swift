import AppHost
import AppHostSystemd
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Prometheus
import Testing

@Suite("analytics' counters span runs")
struct AnalyticsMetricsTests {
    /// One run of a host with analytics on `directory`, its figures in a registry of its own (as
    /// a new process has), after `body`.
    private func run(in directory: String, _ body: (PluggableApplicationHost) async throws -> Void = { _ in }) async throws -> [String: String] {
        let registry = PrometheusCollectorRegistry()
        let host = try PluggableApplicationHost(
            services: [ServiceDescriptor(name: "analytics", service: try AnalyticsService(configuration: ServiceSection([:])))],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), stateDirectory: directory + "/state", metricsFactory: PrometheusMetricsFactory(registry: registry))
        )
        try await host.withRunning {
            try await host.launched()
            try await body(host)
        }
        return prometheusSamples(registry.emitToString())
    }

    @Test("launches, exits by cause and transitions go on from the kept totals in a new process, never back to 0")
    func countersGoOnAcrossRuns() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await run(in: directory) { host in
            try await host.enterBackground()
            try await host.enterForeground()
            try await host.enterBackground()
        }
        #expect(first["apphost_launches_total"] == "1")
        #expect(first[#"apphost_transitions_total{to="background"}"#] == "2")
        #expect(first[#"apphost_transitions_total{to="foreground"}"#] == "1")
        #expect(first[#"apphost_exits_total{cause="clean"}"#] == "0")

        // What record-exit would write after a SIGKILL.
        try LaunchStateFiles(directory: directory + "/state").recordExit(.signal("KILL"))
        let second = try await run(in: directory) { host in
            try await host.enterBackground()
            try await host.enterForeground()
        }
        #expect(second["apphost_launches_total"] == "2")
        #expect(second[#"apphost_transitions_total{to="background"}"#] == "3")
        #expect(second[#"apphost_transitions_total{to="foreground"}"#] == "2")
        #expect(second[#"apphost_exits_total{cause="signal"}"#] == "1")
        #expect(second[#"apphost_exits_total{cause="clean"}"#] == "0")

        let third = try await run(in: directory)
        #expect(third["apphost_launches_total"] == "3")
        #expect(third[#"apphost_exits_total{cause="signal"}"#] == "1")
        #expect(third[#"apphost_exits_total{cause="clean"}"#] == "1")
    }

    @Test("each cause's kind, read back from the description analytics keeps", arguments: [
        (ExitCause.clean, "clean"), (.exitCode(3), "exit-code"), (.signal("KILL"), "signal"), (.coreDump("SEGV"), "core-dump"),
        (.watchdog, "watchdog"), (.timeout, "timeout"), (.oomKill, "oom-kill"), (.unknown, "unknown"),
    ])
    func causeLabels(cause: ExitCause, label: String) {
        #expect(cause.kind == label)
        #expect(ExitCause.kind(ofDescription: cause.description) == label)
        #expect(ExitCause.kinds.contains(label))
    }
}

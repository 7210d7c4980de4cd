import AppHost
import AppHostSystemd
import Foundation
import Testing
@testable import AppHostDaemon

/// `apphostd status`'s text and JSON, from a report as Host1 gives it.
@Suite struct StatusCommandTests {
    static func service(_ name: String, _ state: String, required: Bool = false, health: String = "", restarts: UInt32 = 0, error: String = "") -> HostDBusClient.Report.Service {
        .init(name: name, type: "probe", isRequired: required, state: state, health: health, restarts: restarts, lastError: error, inHookSince: 0, hook: "")
    }

    static let report = HostDBusClient.Report(
        state: "active", status: "active · 3 services · outbox restarting (1/5 in 60s)", sessionLocked: false, sessionLockReason: "",
        healthy: false, healthProblem: "db failed 6 times in 60s",
        services: [
            service("logger", "running", required: true),
            service("outbox", "restarting", restarts: 1, error: "lost the connection"),
            service("db", "failed", required: true, health: "failed 6 times in 60s", restarts: 5, error: "refused"),
            service("cache", "stopped", health: "refused to launch"),
        ]
    )

    @Test("failures first, then stopped, restarting, running; registration order within each")
    func order() {
        #expect(StatusCommand.ordered(Self.report.services).map(\.name) == ["db", "cache", "outbox", "logger"])
    }

    @Test("the text: the status line, the health, one line per service")
    func text() {
        let text = StatusCommand.text(Self.report, identity: .apphostd)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "× apphostd: active · 3 services · outbox restarting (1/5 in 60s)")
        #expect(lines.contains("  Health:  unhealthy: db failed 6 times in 60s"))
        #expect(lines.contains { $0.hasPrefix("× db*") && $0.hasSuffix("failed 6 times in 60s (last error: refused)") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("↻ outbox") && $0.hasSuffix("healthy (last error: lost the connection)") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("● logger*") && $0.hasSuffix("healthy") }, "\(text)")
    }

    @Test("the network path and the power state: a line each, in the text and the JSON")
    func conditions() throws {
        var report = Self.report
        #expect(StatusCommand.text(report, identity: .apphostd).contains("  Network: unknown\n  Power:   normal\n"), "an older daemon's report")
        (report.network, report.networkExpensive, report.lowPowerMode, report.onBattery, report.batteryWarningLevel) = ("unavailable", true, true, true, "critical")
        let text = StatusCommand.text(report, identity: .apphostd)
        #expect(text.contains("  Network: unavailable, expensive\n  Power:   low power mode, on battery, battery critical\n"), "\(text)")
        let parsed = try JSONSerialization.jsonObject(with: Data(StatusCommand.json(report).rendered().utf8))
        let object = try #require(parsed as? [String: Any])
        #expect((object["network"] as? [String: Any])?["status"] as? String == "unavailable")
        #expect((object["power"] as? [String: Any])?["batteryWarningLevel"] as? String == "critical")
        #expect((object["power"] as? [String: Any])?["lowPowerMode"] as? Bool == true)
    }

    @Test("the columns line up with the header, also when the required mark is on the longest name")
    func columnsLineUp() throws {
        let report = HostDBusClient.Report(
            state: "active", status: "active · 3 services", sessionLocked: false, sessionLockReason: "", healthy: true, healthProblem: "",
            services: [Self.service("a", "running"), Self.service("session-lock", "running", required: true), Self.service("notification", "failed", restarts: 12)]
        )
        let lines = StatusCommand.text(report, identity: .apphostd).split(separator: "\n").map { Array($0) }
        let header = try #require(lines.first { String($0).hasPrefix("  SERVICE") })
        let rows = lines.filter { ["●", "×", "↻"].contains($0.first) }.dropFirst()
        #expect(rows.count == 3)
        for column in ["TYPE", "STATE", "RESTARTS", "HEALTH"] {
            let start = String(header).range(of: column).map { String(header).distance(from: String(header).startIndex, to: $0.lowerBound) }
            for row in rows {
                // Each column's text starts where its heading does, after at least one space.
                #expect(start.map { $0 < row.count && row[$0] != " " && row[$0 - 1] == " " } == true, "\(column) in \(String(row))\n\(String(header))")
            }
        }
    }

    @Test("the JSON parses, and says what the text says")
    func json() throws {
        let rendered = StatusCommand.json(Self.report).rendered()
        let parsed = try JSONSerialization.jsonObject(with: Data(rendered.utf8))
        let object = try #require(parsed as? [String: Any], "\(rendered)")
        #expect(object["healthy"] as? Bool == false)
        #expect(object["healthProblem"] as? String == "db failed 6 times in 60s")
        #expect(object["sessionLockReason"] == nil)
        let services = try #require(object["services"] as? [[String: Any]])
        #expect(services.map { $0["name"] as? String } == ["db", "cache", "outbox", "logger"])
        #expect(services[0]["restarts"] as? Int == 5)
        #expect(services[3]["health"] == nil)
    }
}

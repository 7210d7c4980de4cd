import Foundation
import Testing

extension IntegrationSuites {
    /// `org.apphost.Host1` under the user manager, on the session bus at the unit's `BusName=`:
    /// `apphostd status` and `apphostd restart`, and `busctl introspect` against the shipped XML.
    @Suite(.serialized)
    struct DaemonHostDBusTests {
        static let objectPath = "/org/apphost/Host"

        /// `apphostd ARGUMENTS --user` in the sandbox (its session bus).
        static func apphostd(_ daemon: DaemonUnderTest, _ arguments: String...) async throws -> CommandResult {
            guard let binary = IntegrationEnvironment.apphostdBinary else { throw HarnessError("no apphostd binary") }
            return try await daemon.sandbox.run([binary] + arguments + ["--user"])
        }

        static func onTheBus(_ daemon: DaemonUnderTest) async throws {
            try await daemon.waitUntil("the daemon's name is on the bus") {
                try await daemon.daemonRecords().contains { $0["MESSAGE"]?.hasPrefix("log control on the bus as ") == true }
            }
        }

        @Test(
            "apphostd status lists every service with its state, failures first; --json says the same; apphostd restart restarts one, and a name the daemon lacks exits 65",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func statusAndRestart() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")], extraServices: [
                "  - name: flaky\n    type: probe\n    restart: transient\n    restart-delay: 10ms\n    restart-intensity: 1 in 60s\n    settings:\n      faults:\n        - { hook: run, action: throw, after: 10ms }",
            ]) { daemon in
                try await daemon.startOrFail()
                try await Self.onTheBus(daemon)
                // flaky fails twice: past its intensity, an optional service is stopped.
                try await daemon.waitUntil("flaky stopped") { try await daemon.status()["StatusText"]?.contains("disabled: flaky") == true }

                let status = try await Self.apphostd(daemon, "status")
                let diagnostics = status.succeeded ? "" : await daemon.diagnostics()
                #expect(status.succeeded, "\(status)\n\(diagnostics)")
                let lines = status.stdout.split(separator: "\n").map(String.init)
                #expect(lines.first?.hasPrefix("● apphostd: active · 1 service · disabled: flaky") == true, "\(status.stdout)")
                let rows = lines.filter { $0.hasPrefix("● ") || $0.hasPrefix("× ") || $0.hasPrefix("↻ ") }.dropFirst()
                #expect(rows.first?.hasPrefix("× flaky") == true, "failures first: \(status.stdout)")
                #expect(rows.first?.contains("failed 2 times in 60s (last error: probe fault injected in run)") == true, "\(status.stdout)")
                #expect(rows.contains { $0.hasPrefix("● a ") && $0.contains("running") }, "\(status.stdout)")

                let json = try await Self.apphostd(daemon, "status", "--json")
                let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
                let object = try #require(parsed as? [String: Any], "\(json)")
                #expect(object["state"] as? String == "active")
                #expect(object["healthy"] as? Bool == true)
                let services = try #require(object["services"] as? [[String: Any]])
                #expect(services.map { $0["name"] as? String } == ["flaky", "a"])
                #expect(services.first?["state"] as? String == "failed")
                #expect(services.first?["restarts"] as? Int == 1)

                let restart = try await Self.apphostd(daemon, "restart", "a")
                #expect(restart.succeeded && restart.stdout == "a restarted\n", "\(restart)")
                try await daemon.waitUntil("the restart's line") {
                    try await daemon.daemonRecords().contains { $0["MESSAGE"] == "a restarted (1 in this run)" && $0["SERVICE"] == "a" }
                }
                let unknown = try await Self.apphostd(daemon, "restart", "nope")
                #expect(unknown.status == 65, "\(unknown)")
                #expect(unknown.stderr.contains("nope: no such service: the services are flaky, a"), "\(unknown)")
            }
        }

        @Test(
            "apphostd status --user with no daemon on the user bus says so, and how to look, without telling to add --user",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func statusWithNoDaemonOnTheUserBus() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")]) { daemon in
                let status = try await Self.apphostd(daemon, "status")
                #expect(status.status == 69, "\(status)")
                #expect(status.stderr == "apphostd status: no daemon on the user bus as org.apphost.apphostd: is it running? (systemctl --user status apphostd); for the system unit, leave out --user\n", "\(status)")
            }
        }

        @Test(
            "busctl introspect shows org.apphost.Host1 as deploy/dbus/org.apphost.Host1.xml declares it",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func introspectionMatchesTheShippedXML() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")]) { daemon in
                try await daemon.startOrFail()
                try await Self.onTheBus(daemon)
                let introspected = try await daemon.sandbox.run(["busctl", "--user", "introspect", "--xml-interface", "org.apphost.apphostd", Self.objectPath])
                #expect(introspected.succeeded, "\(introspected)")
                let shipped = try String(contentsOfFile: IntegrationSuites.GettingStartedPackageTests.repository + "/deploy/dbus/org.apphost.Host1.xml", encoding: .utf8)
                let interface = try #require(Self.interface("org.apphost.Host1", in: introspected.stdout), "\(introspected.stdout)")
                #expect(Self.interface("org.apphost.Host1", in: shipped) == interface, "the shipped XML differs from what the daemon serves:\n\(interface)")
            }
        }

        @Test(
            "Reload() answers at once with an id, and ReloadFinished(id, applied, message) follows; EnterBackground() answers with the state",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func reloadAndTransitionsOnTheBus() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")]) { daemon in
                try await daemon.startOrFail()
                try await Self.onTheBus(daemon)
                let output = daemon.workDirectory + "/monitor.out"
                // dbus-monitor is connected once it printed its NameAcquired; the file is polled,
                // bounded, as another process's output. SIGKILL: the harness's children ignore
                // SIGTERM.
                let script = """
                    stdbuf -oL dbus-monitor --session "type='signal',interface='org.apphost.Host1'" > \(output) 2>&1 < /dev/null & monitor=$!
                    for i in $(seq 200); do grep -q NameAcquired \(output) && break; sleep 0.05; done
                    busctl --user call org.apphost.apphostd \(Self.objectPath) org.apphost.Host1 Reload
                    for i in $(seq 200); do grep -q 'boolean' \(output) && break; sleep 0.05; done
                    kill -9 $monitor
                    cat \(output)
                    """
                let result = try await daemon.sandbox.run(["sh", "-c", script])
                let id = try #require(result.stdout.split(separator: "\n").first.flatMap { line in line.hasPrefix("s \"reload-") ? line.dropFirst(3).dropLast() : nil }, "\(result)")
                #expect(result.stdout.contains("member=ReloadFinished"), "\(result)")
                #expect(result.stdout.contains("string \"\(id)\""), "the signal names the call's id: \(result)")
                #expect(result.stdout.contains("boolean true"), "\(result)")
                #expect(result.stdout.contains("string \"reloaded "), "\(result)")

                let background = try await daemon.sandbox.run(["busctl", "--user", "call", "org.apphost.apphostd", Self.objectPath, "org.apphost.Host1", "EnterBackground"])
                #expect(background.stdout == "s \"background\"\n", "\(background)")
                try await daemon.waitForState("background")
            }
        }

        @Test(
            "kill -USR1: one PropertiesChanged on /org/apphost/Host with the new State and Status (the services unchanged: nothing invalidated); apphostd status --watch prints the change",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func propertiesChangedFollowsARequest() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")]) { daemon in
                try await daemon.startOrFail()
                try await Self.onTheBus(daemon)
                guard let binary = IntegrationEnvironment.apphostdBinary else { throw HarnessError("no apphostd binary") }
                let output = daemon.workDirectory + "/changes.out"
                let watched = daemon.workDirectory + "/watch.out"
                // As above: dbus-monitor is connected once it printed its NameAcquired; status
                // --watch follows the changes once it printed the whole status.
                let script = """
                    stdbuf -oL dbus-monitor --session "type='signal',interface='org.freedesktop.DBus.Properties',path='\(Self.objectPath)'" > \(output) 2>&1 < /dev/null & monitor=$!
                    \(binary) status --watch --user > \(watched) 2>&1 < /dev/null & watcher=$!
                    for i in $(seq 200); do grep -q NameAcquired \(output) && grep -q 'required: its failure' \(watched) && break; sleep 0.05; done
                    systemctl --user kill --kill-who=main -s SIGUSR1 \(daemon.unitName)
                    for i in $(seq 200); do grep -q 'string "background"' \(output) && grep -q 'apphostd: background' \(watched) && break; sleep 0.05; done
                    kill -9 $monitor $watcher
                    cat \(output)
                    echo ===
                    cat \(watched)
                    """
                let result = try await daemon.sandbox.run(["sh", "-c", script])
                let watch = result.stdout.components(separatedBy: "===\n").last ?? ""
                #expect(watch.hasPrefix("● apphostd: active"), "the whole status first: \(watch)")
                #expect(watch.hasSuffix("\n● apphostd: background · 1 service\n"), "then a line for the change: \(watch)")
                #expect(result.stdout.contains("path=\(Self.objectPath); interface=org.freedesktop.DBus.Properties; member=PropertiesChanged"), "\(result)")
                #expect(result.stdout.contains("string \"org.apphost.Host1\""), "\(result)")
                #expect(result.stdout.contains("string \"State\""), "\(result)")
                #expect(result.stdout.contains("string \"background\""), "the new State's value rides along: \(result)")
                #expect(!result.stdout.contains("string \"Services\""), "no service changed: \(result)")
                #expect(result.stdout.components(separatedBy: "member=PropertiesChanged").count == 2, "one signal for the one request: \(result)")
                try await daemon.waitForState("background")
            }
        }

        @Test(
            "apphostd status --watch ends when the daemon leaves the bus: a line that says so, and exit 69 (EX_UNAVAILABLE)",
            .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
        )
        func watchEndsWhenTheDaemonLeaves() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a")]) { daemon in
                try await daemon.startOrFail()
                try await Self.onTheBus(daemon)
                guard let binary = IntegrationEnvironment.apphostdBinary else { throw HarnessError("no apphostd binary") }
                let watched = daemon.workDirectory + "/watch.out"
                let script = """
                    \(binary) status --watch --user > \(watched) 2>&1 < /dev/null & watcher=$!
                    for i in $(seq 200); do grep -q 'required: its failure' \(watched) && break; sleep 0.05; done
                    systemctl --user stop \(daemon.unitName)
                    for i in $(seq 400); do kill -0 $watcher 2>/dev/null || break; sleep 0.05; done
                    kill -0 $watcher 2>/dev/null && { echo "still watching 20 s after the stop"; kill -9 $watcher; }
                    wait $watcher; echo "exit $?"
                    cat \(watched)
                    """
                let result = try await daemon.sandbox.run(["sh", "-c", script])
                #expect(result.stdout.contains("exit 69\n"), "\(result)")
                #expect(result.stdout.contains("apphostd status: the daemon left the bus"), "\(result)")
                #expect(!result.stdout.contains("still watching"), "\(result)")
            }
        }

        /// The `<interface name="NAME">…</interface>` element of `xml`, its lines trimmed.
        static func interface(_ name: String, in xml: String) -> String? {
            guard let start = xml.range(of: "<interface name=\"\(name)\">"), let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex) else { return nil }
            return xml[start.lowerBound..<end.upperBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
        }
    }
}

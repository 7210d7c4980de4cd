import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// The network path and the power state under systemd as PID 1 (252, and 257 in
    /// scripts/test.sh's trixie pass), from the real daemons where they run in a container:
    /// systemd-networkd over a veth pair, power-profiles-daemon on its placeholder driver; UPower
    /// and NetworkManager, which need hardware, from python3-dbusmock's templates on the
    /// container's system bus. A boot of its own: the tests change the config and the links.
    @Suite(.serialized, .needsSystemManager, .bootedSystem)
    struct MachineConditionContainerTests {
        typealias Support = IntegrationSuites.SystemManagerTests

        /// An exec service that prints the conditions it is given, on both events.
        static let watcher = """
              - name: conditions
                type: exec
                settings:
                  on: [networkDidChange, powerStateDidChange]
                  run: ["/bin/sh", "-c", "echo \\"conditions: network=$APPHOST_NETWORK expensive=$APPHOST_NETWORK_EXPENSIVE low=$APPHOST_LOW_POWER battery=$APPHOST_ON_BATTERY\\""]

            """

        /// The daemon's own records since `cursor`, once one matches `condition`.
        @discardableResult
        static func waitForDaemon(
            _ system: SystemManager, _ what: String, after cursor: String?, timeout: Duration = .seconds(20), _ condition: ([String: String]) -> Bool
        ) async throws -> [[String: String]] {
            let invocation = try await Support.invocation(system)
            return try await Support.waitForJournal(system, what, matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor, timeout: timeout, condition)
        }

        static func message(_ prefix: String) -> ([String: String]) -> Bool {
            { $0["MESSAGE"]?.hasPrefix(prefix) == true }
        }

        /// The watcher's line that holds `part` (`low=1`).
        static func exec(saying part: String) -> ([String: String]) -> Bool {
            { $0["MESSAGE"]?.hasPrefix("conditions: ") == true && $0["MESSAGE"]?.contains(" \(part)") == true }
        }

        /// `apphostd status` inside, on the system bus.
        static func status(_ system: SystemManager) async throws -> CommandResult {
            try await system.run(["/usr/local/bin/apphostd", "status"], timeout: .seconds(10))
        }

        // Fails on a daemon that does not follow networkd, or that reads its own (private)
        // network namespace instead: the unit's PrivateNetwork=yes leaves it only a loopback.
        @Test("networkd over a veth pair: routable is available; the link down is offline in STATUS=, the journal, exec's environment and apphostd status; up again is available")
        func networkdDecides() async throws {
            let system = try Support.system()
            try await Support.withAFifthService(system, replacing: ["  network: auto": "  network: networkd"], entry: Self.watcher) {
                let cursor = try await system.journalCursor()
                try await Self.waitForDaemon(system, "the notice that no source is there", after: nil, Self.message("no source of the network path on the system bus (systemd-networkd)"))
                try system.write("[Match]\nName=v0\n\n[Network]\nAddress=10.153.0.2/24\nGateway=10.153.0.1\n", to: "/etc/systemd/network/50-apphost-v0.network")
                try system.write("[Match]\nName=v1\n\n[Link]\nUnmanaged=yes\n", to: "/etc/systemd/network/50-apphost-v1.network")
                for command in [["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"], ["ip", "link", "set", "v1", "up"], ["systemctl", "start", "systemd-networkd"]] {
                    let result = try await system.run(command)
                    try #require(result.succeeded, "\(command): \(result)")
                }
                let records = try await Self.waitForDaemon(system, "the path available", after: cursor, Self.message("conditions: network=available expensive=0"))
                let following = records.first(where: Self.message("following the network path from systemd-networkd"))
                #expect(following?["PRIORITY"] == "5", "said as a notice after the one that said there was none: \(following ?? [:])")

                let down = try await system.journalCursor()
                try #require(try await system.run(["ip", "link", "set", "v1", "down"]).succeeded)
                let offline = try await Support.waitForStatus(system, "STATUS= saying offline") { $0["StatusText"]?.contains(" · offline") == true }
                #expect(offline["StatusText"]?.hasPrefix("active · 5 services") == true, "\(offline)")
                let lines = try await Self.waitForDaemon(system, "exec told unavailable", after: down, Self.message("conditions: network=unavailable"))
                let edge = lines.first(where: Self.message("the network is unavailable"))
                #expect(edge?["CAUSE"] == "network" && edge?["NETWORK"] == "unavailable", "\(edge ?? [:])")
                #expect(edge?["MESSAGE"]?.contains("systemd-networkd: OperationalState ") == true, "\(edge ?? [:])")
                let audit = lines.first { $0["EVENT"] == "networkDidChange" && $0["MESSAGE"]?.hasPrefix("networkDidChange: ") == true }
                #expect(audit?["CAUSE"] == "network" && audit?["NETWORK"] == "unavailable" && audit?["REQUEST_ID"] != nil, "the logger's record: \(audit ?? [:])")
                let report = try await Self.status(system)
                #expect(report.succeeded && report.stdout.contains("  Network: unavailable\n"), "\(report)")

                let up = try await system.journalCursor()
                try #require(try await system.run(["ip", "link", "set", "v1", "up"]).succeeded)
                try await Support.waitForStatus(system, "STATUS= without offline") { $0["StatusText"]?.hasPrefix("active · 5 services") == true && $0["StatusText"]?.contains("offline") == false }
                try await Self.waitForDaemon(system, "exec told available", after: up, Self.message("conditions: network=available"))
            }
        }

        // Fails on a daemon that follows only power-profiles-daemon's newer name (Debian 12's
        // 0.12 has the old one only), or none.
        @Test("power-profiles-daemon, real: power-saver is low power mode in STATUS=, exec's environment and apphostd status; balanced turns it off")
        func powerProfiles() async throws {
            let system = try Support.system()
            let names = try await system.run(["busctl", "list", "--no-legend", "--no-pager", "--acquired"])
            let (name, path) = names.stdout.contains("org.freedesktop.UPower.PowerProfiles ")
                ? ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles") : ("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles")
            let log = names.stdout.contains(name + " ") ? "" : await system.journalText(unit: "power-profiles-daemon")
            try #require(names.stdout.contains(name + " "), "power-profiles-daemon is not on the bus: \(names)\n\(log)")
            try await Support.withAFifthService(system, entry: Self.watcher) {
                let cursor = try await system.journalCursor()
                let saver = try await system.run(["busctl", "set-property", name, path, name, "ActiveProfile", "s", "power-saver"])
                try #require(saver.succeeded, "\(saver)")
                try await Support.waitForStatus(system, "STATUS= saying low power") { $0["StatusText"]?.hasSuffix(" · low power") == true }
                let lines = try await Self.waitForDaemon(system, "exec told low power", after: cursor, Self.exec(saying: "low=1"))
                let edge = lines.first(where: Self.message("the power state is low power"))
                #expect(edge?["CAUSE"] == "power" && edge?["LOW_POWER"] == "true", "\(edge ?? [:])")
                let report = try await Self.status(system)
                #expect(report.succeeded && report.stdout.contains("  Power:   low power mode\n"), "\(report)")

                let back = try await system.journalCursor()
                let balanced = try await system.run(["busctl", "set-property", name, path, name, "ActiveProfile", "s", "balanced"])
                try #require(balanced.succeeded, "\(balanced)")
                try await Self.waitForDaemon(system, "exec told normal", after: back, Self.exec(saying: "low=0"))
                let status = try await system.show(Support.unit)
                #expect(status["StatusText"]?.contains("low power") == false, "\(status)")
            }
        }
    }
}

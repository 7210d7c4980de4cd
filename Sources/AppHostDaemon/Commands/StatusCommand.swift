import AppHost
import AppHostSupport
import AppHostSystemd
import Glibc

/// `apphostd status [--json] [--watch]`: what the running daemon says about itself and each
/// service, read from its `org.apphost.Host1` over the bus, like `systemctl status`: failures
/// first. With `--watch`, then one line per change Host1 announces (`PropertiesChanged`).
struct StatusCommand {
    let json: Bool
    var watch = false
    let bus: DBusAddress
    let identity: DaemonIdentity

    func run() -> ExitStatus {
        let busName = LogControlEdge.busName(commandName: identity.commandName)
        let client: HostDBusClient
        do {
            client = try HostDBusClient(busName: busName, bus: bus)
        } catch {
            return Self.fail(error, command: "status", busName: busName, bus: bus, identity: identity)
        }
        guard watch else {
            let report: HostDBusClient.Report
            do {
                report = try client.report()
            } catch {
                return Self.fail(error, command: "status", busName: busName, bus: bus, identity: identity)
            }
            print(json ? Self.json(report).rendered() : Self.text(report, identity: identity), terminator: json ? "\n" : "")
            return .clean
        }
        // The whole status once the changes are followed (none is missed), then a line each.
        var isFirst = true
        do throws(HostDBusClient.Failure) {
            try client.watch { report in
                if json {
                    print(Self.json(report).rendered())
                } else {
                    print(isFirst ? Self.text(report, identity: identity) : Self.line(report, identity: identity), terminator: isFirst ? "" : "\n")
                }
                isFirst = false
                fflush(nil)
            }
        } catch {
            return Self.fail(error, command: "status", busName: busName, bus: bus, identity: identity)
        }
        StandardError.write("\(identity.commandName) status: the daemon left the bus\n")
        return .unavailable
    }

    /// A change, as `--watch` prints it: the status line of `apphostd status`.
    static func line(_ report: HostDBusClient.Report, identity: DaemonIdentity) -> String {
        "\(report.healthy ? "●" : "×") \(identity.commandName): \(report.status)"
    }

    /// The order an operator reads: what failed, what is stopped, what restarts, what runs;
    /// registration order within each.
    static func ordered(_ services: [HostDBusClient.Report.Service]) -> [HostDBusClient.Report.Service] {
        let rank = ["failed": 0, "stopped": 1, "restarting": 2]
        return services.enumerated().sorted { (rank[$0.element.state] ?? 3, $0.offset) < (rank[$1.element.state] ?? 3, $1.offset) }.map(\.element)
    }

    static func text(_ report: HostDBusClient.Report, identity: DaemonIdentity) -> String {
        var text = line(report, identity: identity) + "\n"
        text += "  State:   \(report.state)\n"
        text += "  Session: \(report.sessionLocked ? "locked" + (report.sessionLockReason.isEmpty ? "" : " (\(report.sessionLockReason))") : "unlocked")\n"
        text += "  Health:  \(report.healthy ? "healthy" : "unhealthy: \(report.healthProblem)")\n"
        text += "  Network: \(report.network)\(report.networkExpensive ? ", expensive" : "")\n"
        text += "  Power:   \(power(report))\n\n"
        let services = ordered(report.services)
        let nameWidth = max(7, services.map(\.name.count).max() ?? 0)
        let typeWidth = max(4, services.map(\.type.count).max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        text += "  " + pad("SERVICE", nameWidth + 2) + pad("TYPE", typeWidth) + "  " + pad("STATE", 10) + "  RESTARTS  HEALTH\n"
        for service in services {
            let mark = service.state == "running" ? "●" : service.state == "restarting" ? "↻" : "×"
            var health = service.health.isEmpty ? "healthy" : service.health
            if !service.lastError.isEmpty { health += " (last error: \(service.lastError))" }
            let name = service.name + (service.isRequired ? "*" : "")
            text += "\(mark) " + pad(name, nameWidth + 2) + pad(service.type, typeWidth) + "  " + pad(service.state, 10) + "  " + pad("\(service.restarts)", 8) + "  " + health + "\n"
        }
        text += "\n  * required: its failure makes the daemon unhealthy\n"
        return text
    }

    /// `low power mode, on battery, battery low`, or `normal`.
    static func power(_ report: HostDBusClient.Report) -> String {
        var parts: [String] = []
        if report.lowPowerMode { parts.append("low power mode") }
        if report.onBattery { parts.append("on battery") }
        if !["unknown", "none"].contains(report.batteryWarningLevel) { parts.append("battery \(report.batteryWarningLevel)") }
        return parts.isEmpty ? "normal" : parts.joined(separator: ", ")
    }

    static func json(_ report: HostDBusClient.Report) -> JSONValue {
        .object([
            "state": .string(report.state),
            "status": .string(report.status),
            "sessionLocked": .bool(report.sessionLocked),
            "sessionLockReason": report.sessionLocked ? .string(report.sessionLockReason) : nil,
            "healthy": .bool(report.healthy),
            "healthProblem": report.healthy ? nil : .string(report.healthProblem),
            "network": .object(["status": .string(report.network), "expensive": .bool(report.networkExpensive)]),
            "power": .object([
                "lowPowerMode": .bool(report.lowPowerMode), "onBattery": .bool(report.onBattery), "batteryWarningLevel": .string(report.batteryWarningLevel),
            ]),
            "services": .array(ordered(report.services).map { service in
                .object([
                    "name": .string(service.name),
                    "type": .string(service.type),
                    "required": .bool(service.isRequired),
                    "state": .string(service.state),
                    "health": service.health.isEmpty ? nil : .string(service.health),
                    "restarts": .number(Double(service.restarts)),
                    "lastError": service.lastError.isEmpty ? nil : .string(service.lastError),
                    "inHookSince": service.inHookSince == 0 ? nil : .number(Double(service.inHookSince) / 1_000_000),
                    "hook": service.hook.isEmpty ? nil : .string(service.hook),
                ])
            }),
        ])
    }
}

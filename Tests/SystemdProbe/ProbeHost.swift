import AppHost
import AppHostSystemd
import Glibc
import Logging

/// A host with one service and its `SystemdNotifyEdge`, driven by lines on stdin.
struct ProbeHost {
    /// Never returns from `applicationDidEnterBackground` (until cancelled).
    struct Hangs: ApplicationService {
        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            try await Task.sleep(for: .seconds(3600))
        }
    }

    /// Loses its database while it takes new settings.
    struct FailsOnUpdate: ApplicationService {
        func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
            application.reportUnhealthy("database gone")
            return .applied
        }
    }

    struct Idle: ApplicationService {}

    var service = "idle"
    var waitingFor: [String] = []
    var readyEarly: [String] = []
    var watchdog = false
    var hostConfiguration = PluggableApplicationHost.Configuration()

    init(arguments: [String]) {
        var rest = arguments[...]
        while let option = rest.popFirst() {
            switch option {
            case "--service": service = rest.popFirst() ?? service
            case "--waiting-for": waitingFor.append(rest.popFirst() ?? "")
            case "--ready-early": readyEarly.append(rest.popFirst() ?? "")
            case "--watchdog": watchdog = true
            case "--hook-deadline-ms": hostConfiguration.hookDeadline = .milliseconds(Int(rest.popFirst() ?? "") ?? 0)
            case "--terminate-deadline-ms": hostConfiguration.terminateDeadline = .milliseconds(Int(rest.popFirst() ?? "") ?? 0)
            case "--stall-limit-ms": hostConfiguration.stallLimit = .milliseconds(Int(rest.popFirst() ?? "") ?? 0)
            default: output("unknown option \(option)")
            }
        }
    }

    func descriptor(interval: String) -> ServiceDescriptor {
        switch service {
        case "hang": ServiceDescriptor(name: "hang", service: Hangs())
        case "fails-on-update": ServiceDescriptor(name: "db", configuration: ServiceSection(["interval": .string(interval)])) { FailsOnUpdate() }
        default: ServiceDescriptor(name: "idle", service: Idle())
        }
    }

    func run() async -> Int32 {
        let logger = Logger(label: "probe") { _ in SwiftLogNoOpLogHandler() }
        let conditions = (waitingFor + readyEarly).map(ReadinessCondition.init)
        for condition in conditions where readyEarly.contains(condition.name) { condition.markReady() }
        do {
            let host = try PluggableApplicationHost(services: service == "none" ? [] : [descriptor(interval: "1s")], configuration: hostConfiguration, logger: logger)
            let notify = SystemdNotifyEdge(host: host, notifier: SystemdNotifier(), waitingFor: conditions, triggersWatchdog: watchdog)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await host.run() }
                group.addTask { await notify.run() }
                try await host.launched()
                output("launched")
                while let line = readLine() {
                    let words = line.split(separator: " ").map(String.init)
                    switch words.first {
                    case "mark": conditions.first { $0.name == words.last }?.markReady()
                    case "background": output("changed=\(try await host.enterBackground())")
                    case "foreground": output("changed=\(try await host.enterForeground())")
                    case "reload": _ = try await host.reload([descriptor(interval: words.last ?? "")])
                    case "terminate":
                        await host.terminate()
                        group.cancelAll()
                        output("ok")
                        return
                    default: output("unknown input \(line)")
                    }
                    output("ok")
                }
                await host.terminate()
                group.cancelAll()
            }
            return 0
        } catch {
            output("error: \(error)")
            return 1
        }
    }
}

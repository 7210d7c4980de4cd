import AppHost
import AppHostSystemd
import Heartbeat
import Logging
import ServiceLifecycle

/// Another part of your program (an HTTP server, say); this one waits for the shutdown.
struct Server: Service {
    func run() async throws {
        try await gracefulShutdown()
    }
}

@main
struct MyProgram {
    static func main() async throws {
        let logger = Logger(label: "my-program")
        // First, before other threads start: blocks the lifecycle signals, starts the edge's loop.
        let systemd = try SystemdIntegration(logger: logger)
        defer { systemd.close() }
        let host = try PluggableApplicationHost(services: [
            ServiceDescriptor(name: "heartbeat", service: try Heartbeat(configuration: .empty)),
        ])
        // Every part of the edge by default; turn off what the program does without.
        var options = SystemdIntegration.Options(name: "my-program")
        options.watchdog = try WatchdogSettings.fromEnvironment()
        // The edge in its order, yours last: SIGTERM terminates the host, whose end shuts the
        // group down, and the host's last reports still go out.
        let group = ServiceGroup(configuration: .init(
            services: try systemd.services(for: host, options: options, with: [.init(service: Server())]),
            logger: logger
        ))
        try await group.run()
    }
}

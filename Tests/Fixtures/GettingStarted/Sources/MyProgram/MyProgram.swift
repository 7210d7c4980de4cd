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
        let host = try PluggableApplicationHost(services: [
            ServiceDescriptor(name: "heartbeat", service: try Heartbeat(configuration: .empty)),
        ])
        // First, before other threads start: blocks the lifecycle signals and reads them.
        let signals = try LifecycleSignalEdge(host: host)
        let group = ServiceGroup(configuration: .init(
            services: [
                // Before the host: the group stops services in reverse order, so the host's last
                // reports go out. SIGTERM terminates the host; its end shuts the group down.
                .init(service: SystemdNotifyEdge(host: host, notifier: SystemdNotifier())),
                .init(service: host, successTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: signals),
                .init(service: Server()),
            ],
            logger: Logger(label: "my-program")
        ))
        try await group.run()
    }
}

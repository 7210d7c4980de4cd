// The host embedded in a program's own ServiceGroup, beside another service of the program, with
// the lifecycle signals and the sd_notify reporter: what README.md's "Write your own service"
// shows. The integration tests run it and send it signals.
import AppHost
import AppHostSystemd
import Logging
import ServiceLifecycle

/// Logs the events it gets: the program's own application service.
struct Greeter: ApplicationService {
    func applicationDidEnterBackground(_ application: HostedApplication) async throws {
        application.logger.info("entered background")
    }

    func applicationWillTerminate(_ application: HostedApplication) async throws {
        application.logger.info("goodbye")
    }
}

/// Another long-running part of the program (an HTTP server, say): runs until the group stops.
struct Heartbeat: Service {
    func run() async throws {
        try await gracefulShutdown()
    }
}

@main
struct EmbeddedHost {
    static func main() async throws {
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "greeter", service: Greeter())])
        // First, before other threads start: blocks the lifecycle signals and reads them.
        let signals = try LifecycleSignalService(host: host)
        let group = ServiceGroup(configuration: .init(
            services: [
                // Before the host: the group stops services in reverse order, so the host's last
                // reports go out. The host's end (SIGTERM → terminate) shuts the group down.
                .init(service: SystemdNotifyService(host: host, notifier: SystemdNotifier())),
                .init(service: host, successTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: signals),
                .init(service: Heartbeat()),
            ],
            logger: Logger(label: "embedded-host")
        ))
        try await group.run()
    }
}

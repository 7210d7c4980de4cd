import AppHost
import AppHostSystemd
import Glibc
import Hummingbird
import Logging
import ServiceLifecycle

@main
struct HelloServer {
    static func main() async throws {
        let port = getenv("HELLO_PORT").flatMap { Int(String(cString: $0)) } ?? 8080
        // The lifecycle signals are blocked and read before any other thread starts.
        let host = try PluggableApplicationHost(services: [])
        let signals = try LifecycleSignalEdge(host: host)

        // READY=1 waits until the server accepts connections.
        let listening = ReadinessCondition("http")
        let router = Router()
        router.get("/") { _, _ in "hello\n" }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { _ in listening.markReady() }
        )
        let notify = SystemdNotifyEdge(host: host, notifier: SystemdNotifier(), waitingFor: [listening])

        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: notify),
                .init(service: host, successTerminationBehavior: .gracefullyShutdownGroup),
                .init(service: signals),
                .init(service: SlowStart(app, delay: startDelay())),
            ],
            logger: Logger(label: "hello-server")
        ))
        try await group.run()
    }

    /// `HELLO_START_DELAY_MS`: how long the server waits before it binds, so a test can see
    /// READY=1 held (0 by default).
    static func startDelay() -> Duration {
        .milliseconds(getenv("HELLO_START_DELAY_MS").flatMap { Int(String(cString: $0)) } ?? 0)
    }
}

/// Runs `service` after `delay`.
struct SlowStart<Inner: Service>: Service {
    let inner: Inner
    let delay: Duration

    init(_ inner: Inner, delay: Duration) {
        self.inner = inner
        self.delay = delay
    }

    func run() async throws {
        try await Task.sleep(for: delay)
        try await inner.run()
    }
}

import AppHost
import ServiceLifecycle

/// Runs a service once the host has launched (or failed to): the prelude that keeps a part of
/// the edge off the way to `READY=1`, as Hummingbird's prelude does for its server. The bus
/// server and logind's client wait so; a graceful shutdown during the wait ends the wait, and
/// the service then sees the shutdown at once.
public struct AfterLaunch<Wrapped: Service>: Service {
    /// The host whose launch is waited for.
    let host: PluggableApplicationHost
    /// What runs after it.
    public let wrapped: Wrapped

    /// `wrapped`, started after `host`'s launch.
    public init(host: PluggableApplicationHost, _ wrapped: Wrapped) {
        self.host = host
        self.wrapped = wrapped
    }

    /// Waits for the launch, then runs the wrapped service.
    public func run() async throws {
        _ = try? await host.launched()
        try await wrapped.run()
    }
}

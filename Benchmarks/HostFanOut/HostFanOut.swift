import AppHost
import Benchmark

/// A service that keeps every default hook: what is left is the host's own cost.
struct NoOpService: ApplicationService {}

/// A launched host with `count` no-op services, in the active state.
func launchedHost(services count: Int) async throws -> PluggableApplicationHost {
    let host = try PluggableApplicationHost(
        services: (0..<count).map { ServiceDescriptor(name: "noop-\($0)", service: NoOpService()) }
    )
    // Unstructured on purpose: the host runs for the whole suite; the benchmark drives it.
    Task { try await host.run() }
    try await host.launched()
    return host
}

let benchmarks: @Sendable () -> Void = {
    // One round trip = enterBackground (willResignActive, didEnterBackground) + enterForeground
    // (willEnterForeground, didBecomeActive): 4 hook events per service.
    for count in [1, 100, 1000] {
        Benchmark(
            "background-foreground round trip, \(count) services",
            configuration: .init(
                metrics: [.wallClock, .cpuTotal, .mallocCountTotal],
                warmupIterations: 10,
                maxDuration: .seconds(3),
                maxIterations: count >= 1000 ? 2_000 : 20_000
            ),
            closure: { benchmark, host in
                for _ in benchmark.scaledIterations {
                    do {
                        blackHole(try await host.enterBackground())
                        blackHole(try await host.enterForeground())
                    } catch {
                        fatalError("illegal transition in the benchmark: \(error)")
                    }
                }
            },
            setup: { try await launchedHost(services: count) }
        )
    }
    // A change of the network path: one request with cause network, `networkDidChange` to every
    // service, the value kept in the shared state; two per iteration (offline, online again).
    for count in [4, 100] {
        Benchmark(
            "network path change, \(count) services",
            configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal], warmupIterations: 10, maxDuration: .seconds(3), maxIterations: 20_000),
            closure: { benchmark, host in
                for _ in benchmark.scaledIterations {
                    await host.updateNetworkPath(NetworkPath(status: .unavailable))
                    await host.updateNetworkPath(NetworkPath(status: .available))
                }
            },
            setup: { try await launchedHost(services: count) }
        )
    }
}

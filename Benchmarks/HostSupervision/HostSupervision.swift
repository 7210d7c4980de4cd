import AppHost
import Benchmark
import Logging

/// A service that keeps every default hook; its run loop returns at once (not restarted).
struct NoOpService: ApplicationService {}

/// A service whose run loop lasts until `end()` is called (or the host cancels it): each call
/// makes exactly one run of `run(_:)` return on its own. The ends are buffered, so one that
/// comes before the next run started is not lost.
final class EndOnDemand: ApplicationService {
    let ends: AsyncStream<Void>
    let trigger: AsyncStream<Void>.Continuation

    init() {
        (ends, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .unbounded)
    }

    func end() { trigger.yield(()) }

    func run(_ application: ApplicationHandle) async throws {
        // One run at a time iterates (the host starts the next run after this one returned).
        for await _ in ends { return }
    }
}

/// A service whose run loop waits until the host cancels it: a service with work of its own.
struct Parked: ApplicationService {
    func run(_ application: ApplicationHandle) async throws {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        for await _ in stream {}
        continuation.finish()
    }
}

/// The host's log lines at `warning`: the restart's notices are not built (the daemon writes
/// them to the journal; that is the journal's cost, not the host's).
let quietLogger: Logger = {
    var logger = Logger(label: "apphost-bench")
    logger.logLevel = .warning
    return logger
}()

/// A host with `services` no-op services and `descriptor` in front of them, run and launched.
func launchedHost(_ descriptor: ServiceDescriptor, services count: Int) async throws -> PluggableApplicationHost {
    let host = try PluggableApplicationHost(
        services: [descriptor] + (0..<count).map { ServiceDescriptor(name: "noop-\($0)", service: NoOpService()) },
        logger: quietLogger
    )
    // Unstructured on purpose: the host runs for the whole suite; the benchmark drives it.
    Task { try await host.run() }
    try await host.launched()
    return host
}

/// What a supervised-restart iteration needs: the service to end, and the restarts as announced.
struct Supervised: Sendable {
    let host: PluggableApplicationHost
    let service: EndOnDemand
    let restarts: AsyncStream<ServiceDidRestart>
}

let benchmarks: @Sendable () -> Void = {
    // A restart the policy makes: one iteration ends the run loop and waits for the host's
    // ServiceDidRestart. `delay` is the policy's restart-delay (and restart-delay-max, so it never
    // doubles); the wall clock includes it and up to a tenth more as jitter. The intensity is
    // never reached; the period is short so the restarts within it stay few, as with a real
    // policy (5 in 60s).
    let cases: [(label: String, scope: RestartPolicy.Scope, delay: Duration)] = [
        ("run-loop restart, delay 1ms", .runLoop, .milliseconds(1)),
        ("run-loop restart, delay 0", .runLoop, .zero),
        ("instance-scope restart, delay 1ms", .instance, .milliseconds(1)),
    ]
    for (label, scope, delay) in cases {
        for count in [1, 100] {
            Benchmark(
                "\(label), 1+\(count) services",
                configuration: .init(
                    metrics: [.wallClock, .mallocCountTotal],
                    warmupIterations: 20,
                    maxDuration: .seconds(2),
                    maxIterations: 20_000
                ),
                closure: { (benchmark: Benchmark, supervised: Supervised) in
                    var restarts = supervised.restarts.makeAsyncIterator()
                    for _ in benchmark.scaledIterations {
                        supervised.service.end()
                        guard let restart = await restarts.next(), restart.service == "restarting" else {
                            fatalError("no restart announced")
                        }
                        blackHole(restart)
                    }
                },
                setup: { () async throws -> Supervised in
                    let service = EndOnDemand()
                    var descriptor = ServiceDescriptor(name: "restarting", service: service)
                    descriptor.restart = RestartPolicy(
                        mode: .permanent, scope: scope, delay: delay, maximumDelay: delay,
                        intensity: 1_000_000, period: .milliseconds(5)
                    )
                    let host = try await launchedHost(descriptor, services: count)
                    return Supervised(host: host, service: service, restarts: host.bus.subscribe(to: ServiceDidRestart.self))
                }
            )
        }
    }

    // An operator's restart (`apphostd restart NAME` without the bus): the whole service, a new
    // instance from its factory, its run loop cancelled and started again.
    for count in [1, 100] {
        Benchmark(
            "restartService(named:), 1+\(count) services",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal],
                warmupIterations: 20,
                maxDuration: .seconds(2),
                maxIterations: 20_000
            ),
            closure: { benchmark, host in
                for _ in benchmark.scaledIterations {
                    do {
                        try await host.restartService(named: "restarted")
                    } catch {
                        fatalError("restart failed: \(error)")
                    }
                }
            },
            setup: {
                try await launchedHost(ServiceDescriptor(name: "restarted", makeService: { Parked() }), services: count)
            }
        )
    }
}

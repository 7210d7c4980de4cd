import AppHost

/// Runs a `TestHost` over `services` for the length of `body`: the host runs in a task group
/// beside the body, every hook call is recorded, and the host is terminated when the body
/// returns or throws. The body starts while the launch runs; `launched()` waits for it.
///
/// ```swift
/// @Test func flushesInTheBackground() async throws {
///     try await withTestHost([ServiceDescriptor(name: "counter", service: CounterService())]) { host in
///         try await host.launched()
///         try await host.enterBackground()
///         #expect(host.events(of: "counter").last == .didEnterBackground)
///     }
/// }
/// ```
///
/// - Parameters:
///   - services: the services, in registration order.
///   - configuration: host settings; 5-second deadlines and no launch state by default (every
///     launch a first launch).
///   - logs: where the host's and the services' log records go.
///   - timeout: how long a wait lasts before it fails the test.
///   - seed: sets shared state before the launch (`store.set(ThemeColor.self, to: "red")`).
public func withTestHost<Value: Sendable>(
    _ services: [ServiceDescriptor],
    configuration: PluggableApplicationHost.Configuration = .init(hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5)),
    logs: CapturedLogs = CapturedLogs(),
    timeout: Duration = .seconds(10),
    seed: (SharedStateStore) -> Void = { _ in },
    _ body: (TestHost) async throws -> Value
) async throws -> Value {
    let calls = TestLog<RecordedHookCall>()
    let host = try PluggableApplicationHost(
        services: services.map { $0.recording(into: calls) },
        configuration: configuration,
        logger: logs.logger(label: "apphost")
    )
    seed(host.sharedState)
    let testHost = TestHost(host: host, calls: calls, logs: logs, timeout: timeout)
    let reports = host.reports
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            // Ends when run() returns.
            for await report in reports { testHost.reports.append(report) }
        }
        group.addTask {
            // A failed launch ends run() with the LaunchFailure that launched() reports.
            try? await host.run()
        }
        let result: Value
        do {
            result = try await body(testHost)
        } catch {
            await host.terminate()
            throw error
        }
        await host.terminate()
        try await group.waitForAll()
        return result
    }
}

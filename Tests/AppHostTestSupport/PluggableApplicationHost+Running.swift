import AppHost

extension PluggableApplicationHost {
    /// Runs the host for the length of `body`, the tests' stand-in for a `ServiceGroup`: `run()`
    /// is a child task beside the body, and when the body returns or throws the host is
    /// terminated and the run awaited, so no host outlives its test. The body starts while the
    /// launch runs; `launched()` waits for it (and throws the `LaunchFailure` of a failed launch,
    /// which also ends `run()`). `withTestHost` in AppHostTestKit does the same for a `TestHost`.
    ///
    /// ```swift
    /// try await host.withRunning {
    ///     try await host.launched()
    ///     try await host.enterBackground()
    /// }
    /// ```
    ///
    /// A hook that never returns keeps `run()` from returning, so a test that holds one back must
    /// let it go before the body ends.
    @discardableResult
    public func withRunning<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // A failed launch ends run() with the LaunchFailure that launched() reports.
            group.addTask { try? await self.run() }
            let result: Value
            do {
                result = try await body()
            } catch {
                await terminate()
                throw error
            }
            await terminate()
            try await group.waitForAll()
            return result
        }
    }
}

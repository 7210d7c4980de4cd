import AppHost

extension PluggableApplicationHost {
    /// Runs the host beside the test and returns once it launched: the tests' stand-in for a
    /// `ServiceGroup`. The run ends with `terminate()`.
    @discardableResult
    public func launch() async throws(LaunchFailure) -> LaunchOptions {
        // Unstructured on purpose: the host runs beside the test, which drives it; `launched()`
        // reports how the launch went and `terminate()` ends the run.
        Task { try? await self.run() }
        return try await launched()
    }
}

import ServiceContextModule
import ServiceLifecycle

extension PluggableApplicationHost: Service {
    /// Launches the services, serves requests until terminate — from `terminate()` or a graceful
    /// shutdown of the enclosing `ServiceGroup` — and returns once every service got its last
    /// call. A host runs once.
    ///
    /// Cancelling the task that runs it stops the host at once: hooks in progress are cancelled
    /// and services get no `applicationWillTerminate`, so the next launch counts the exit as
    /// unclean. Shut the group down gracefully for an orderly stop.
    ///
    /// - Throws: `LaunchFailure` when the launch failed (after its rollback) or was terminated,
    ///   or when the host ran before.
    public func run() async throws {
        let isFirstRun = outlet.published.withLock { published in
            defer { published.isRunning = true }
            return !published.isRunning
        }
        guard isFirstRun else { throw LaunchFailure(service: "", hook: "", reason: .notLaunchable(state)) }
        let input = self.input
        let lockChanges = bus.observe(SessionLockDidChange.self) { input.yield(.sessionLockChanged($0)) }
        defer { bus.stopObserving(lockChanges) }
        let (arms, timer) = AsyncStream<ContinuousClock.Instant>.makeStream(bufferingPolicy: .unbounded)
        var loop = HostLoop(host: self, inputs: inputs.makeAsyncIterator(), timer: timer)
        let outcome = await withDiscardingTaskGroup { group in
            group.addTask { await DeadlineTimer.run(arms: arms, wake: input) }
            let outcome = await withGracefulShutdownHandler {
                await loop.run(group: &group)
            } onGracefulShutdown: {
                input.yield(.request(.terminate(reason: "graceful shutdown", reply: nil), context: .forRequest(nil)))
            }
            timer.finish()
            group.cancelAll()
            return outcome
        }
        outlet.published.withLock { $0.reports }?.finish()
        try outcome.get()
    }
}

import Logging

/// One hosted service as the host's loop keeps it: the instance, its settings and health, and
/// the calls queued behind a hook that ran past its deadline.
struct ServiceSlot {
    let id: Int
    var descriptor: ServiceDescriptor
    let service: any ApplicationService
    let logger: Logger
    var health: ServiceHealth
    var hookDeadline: Duration
    var launchDeadline: Duration
    /// A hook of it ran past its deadline and has not returned: later calls wait in `backlog`.
    var isBusy = false
    /// Since when it is inside the hook that made it busy, and which hook that is.
    var busySince: (instant: ContinuousClock.Instant, hook: String)?
    /// How long it may stay inside one hook before the host counts as unhealthy (when required).
    var stallLimit: Duration
    /// What it last said about its health, as its handles report it, and as the loop last read it.
    let reportedHealth: ReportedHealth
    var healthReport: String?
    /// Calls made while busy, in order; they run once the late hook returned.
    var backlog: [HookCall] = []
    /// Ends its run loop (which is then cancelled).
    var runLoopStop: AsyncStream<Never>.Continuation?
    /// Which start of its run loop runs now: an end reported by an earlier one is old news.
    var runLoopID = 0
    /// Its restart policy at work; nil until its run loop first started.
    var supervisor: RestartSupervisor?
    /// What its handles share (name, logger, settings, launch options with its restored bytes).
    var context: ApplicationHandle.Context
    /// What it handed to `keepRestorableState(_:)` since the loop last took it.
    let stagedState: StagedRestorableState

    var name: String { descriptor.name }

    /// Its health as the status lists it: with its own report and the hook it is stuck in.
    var statusHealth: ServiceHealth {
        var shown = health
        shown.healthReport = healthReport
        if isBusy, let busySince {
            shown.busyHook = busySince.hook
            shown.busySince = busySince.instant
        }
        return shown
    }

    /// It gets no further events, and its supervisor no further step.
    mutating func disable(reason: String) {
        health.condition = .disabled(reason: reason)
        supervisor?.retire()
    }

    /// Runs `run(_:)` until it returns or `stop` ends; what it does before it first suspends
    /// is done before this returns, when started with `addImmediateTask`. How it ended on its
    /// own goes to `ended`; a run the host stopped reports nothing.
    static func runLoop(
        of service: any ApplicationService, _ application: ApplicationHandle, until stop: AsyncStream<Never>,
        ended: @escaping @Sendable (RunLoopEnding) -> Void
    ) async {
        await withTaskGroup(of: RunLoopEnding?.self) { group in
            group.addImmediateTask {
                do {
                    try await service.run(application)
                    return Task.isCancelled ? nil : .returned
                } catch {
                    return Task.isCancelled ? nil : .threw("\(error)")
                }
            }
            group.addTask {
                for await _ in stop {}
                return nil
            }
            if let ending = await group.next() ?? nil { ended(ending) }
            group.cancelAll()
        }
    }
}

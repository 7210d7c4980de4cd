import AppHost
import ServiceLifecycle

/// Tells systemd where the host stands, as a `Service`: every `HostReport` as `sd_notify` fields
/// (`READY=1`, `STATUS=`, `RELOADING=1` with `MONOTONIC_USEC=`, `STOPPING=1`,
/// `EXTEND_TIMEOUT_USEC=`, `ERRNO=`), in order, until the host's run ends.
///
/// The launch's `READY=1` also waits for the program's own `ReadinessCondition`s, so a program
/// that embeds the host is ready when its other parts are (an HTTP server listening); meanwhile
/// `STATUS=` says what it waits for.
///
/// List it before the host in the `ServiceGroup`: the group shuts its services down in reverse
/// order, so the host terminates (and reports its last status) before this service is told to end.
public struct SystemdNotifyEdge: Service {
    let reports: AsyncStream<HostReport>
    let notifier: SystemdNotifier
    let reloadStatus: String
    let conditions: [ReadinessCondition]
    let triggersWatchdog: Bool

    /// What the service waits for: the host's next report, or one of the conditions.
    private enum Input {
        case report(HostReport)
        case conditionReady
    }

    /// Takes the host's report stream now, so nothing the host reports once it runs is missed.
    /// `reloadStatus` is the `STATUS=` that goes with `RELOADING=1`; `conditions` hold the
    /// launch's `READY=1` until each is marked ready. With `triggersWatchdog` (the unit has
    /// `WatchdogSec=`), a status that says the host is unhealthy goes out with
    /// `WATCHDOG=trigger`, once per problem.
    public init(host: PluggableApplicationHost, notifier: SystemdNotifier, reloadStatus: String = "reloading", waitingFor conditions: [ReadinessCondition] = [], triggersWatchdog: Bool = false) {
        self.reports = host.reports
        self.notifier = notifier
        self.reloadStatus = reloadStatus
        self.conditions = conditions
        self.triggersWatchdog = triggersWatchdog
    }

    /// Forwards reports until the host's run ended (a graceful shutdown does not cut it short, so
    /// the last status still goes out), then waits for its turn to shut down.
    public func run() async {
        guard conditions.contains(where: { !$0.isReady }) else {
            // Nothing to wait for: the reports go straight out, without a relay task between
            // (one task hop less on every request's way to STATUS=).
            await forward(reports.map { Input.report($0) })
            try? await gracefulShutdown()
            return
        }
        let (inputs, input) = AsyncStream<Input>.makeStream()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await report in reports { input.yield(.report(report)) }
                input.finish()
            }
            for condition in conditions where !condition.isReady {
                group.addTask {
                    await condition.waitUntilReady()
                    input.yield(.conditionReady)
                }
            }
            await forward(inputs)
            group.cancelAll()
        }
        try? await gracefulShutdown()
    }

    private func forward<Inputs: AsyncSequence<Input, Never>>(_ inputs: Inputs) async {
        var state = ForwardingState()
        for await input in inputs { send(input, &state) }
    }

    /// What the reports so far left to remember.
    private struct ForwardingState {
        /// `EXTEND_TIMEOUT_USEC=` for each of a thousand services would be a thousand datagrams:
        /// one is sent when the last one is a second old, or when the next step may take longer
        /// than the last one allowed for.
        var lastExtension: (at: ContinuousClock.Instant, next: Duration)?
        /// The launch's ready status, held while a condition is not ready.
        var heldReady: HostStatus?
        var isLaunchReady = false
        /// The health problem a `WATCHDOG=trigger` went out for.
        var triggered: String?
    }

    /// One input's datagrams. Synchronous and never inlined into the loop above, so its locals
    /// stay on the thread's stack: inlined, they made the loop's async frame 7.5 KiB, kept for
    /// the daemon's whole life (Benchmarks/README.md, issue 54's fourth slice).
    @inline(never)
    private func send(_ input: Input, _ state: inout ForwardingState) {
        let report: HostReport
        switch input {
        case .report(let next): report = next
        case .conditionReady:
            guard let held = state.heldReady else { return }
            let waiting = conditions.filter { !$0.isReady }
            if waiting.isEmpty {
                state.heldReady = nil
                state.isLaunchReady = true
                notifier.ready(status: held.description)
            } else {
                notifier.status(Self.waiting(held, for: waiting))
            }
            return
        }
        switch report {
        case .status(let status) where state.heldReady != nil:
            state.heldReady = status
            notifier.status(Self.waiting(status, for: conditions.filter { !$0.isReady }))
        case .status(let status) where triggersWatchdog && status.healthProblem != nil && status.healthProblem != state.triggered:
            state.triggered = status.healthProblem
            notifier.watchdogTrigger(status: status.description)
        case .status(let status), .stopped(let status): notifier.status(status.description)
        case .progress(let next):
            let now = ContinuousClock.now
            if let last = state.lastExtension, now - last.at < .seconds(1), next <= last.next { return }
            state.lastExtension = (now, next)
            notifier.extendTimeout(by: next + .seconds(1))
        case .ready(let status):
            let waiting = state.isLaunchReady ? [] : conditions.filter { !$0.isReady }
            if waiting.isEmpty {
                state.isLaunchReady = true
                if triggersWatchdog, let problem = status.healthProblem, problem != state.triggered {
                    // Unhealthy as a reload ends: the same datagram asks for the restart.
                    state.triggered = problem
                    notifier.send([("READY", "1"), ("STATUS", status.description), ("WATCHDOG", "trigger")])
                } else {
                    notifier.ready(status: status.description)
                }
            } else {
                state.heldReady = status
                notifier.status(Self.waiting(status, for: waiting))
            }
        case .reloading: notifier.reloading(status: reloadStatus)
        case .stopping(let reason):
            state.heldReady = nil
            notifier.stopping(status: "stopping (\(reason))")
        case .launchFailed(let failure, _): notifier.launchFailed(status: "launch failed: \(failure)", errno: failure.errnoValue)
        }
    }

    private static func waiting(_ status: HostStatus, for conditions: [ReadinessCondition]) -> String {
        "\(status.description) · waiting for \(conditions.map(\.name).joined(separator: ", "))"
    }
}

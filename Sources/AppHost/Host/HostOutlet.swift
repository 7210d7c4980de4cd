import Synchronization

/// Between the host's loop and everyone else: the one way the loop makes its state known
/// (status, launch outcome, the hook run in progress, reports), and the inputs and flags the
/// services' tasks hand it. The host's API reads here without waiting for the loop; the loop
/// holds this, not the host.
final class HostOutlet: Sendable {
    /// What the loop last published.
    struct Published {
        var status: HostStatus
        var launch: Result<LaunchOptions, LaunchFailure>?
        var reports: AsyncStream<HostReport>.Continuation?
        var isRunning = false
        /// The run of hook calls the loop last started.
        var run: HookRun?
        /// The status the last `.status` or `.ready` report carried.
        var reported: HostStatus?
        /// Who follows the status's changes (`PluggableApplicationHost.observeStatusChanges`).
        var observers: [Int: @Sendable (HostStatus) -> Void] = [:]
        var nextObserver = 0
    }

    let published: Mutex<Published>
    /// Where the loop's inputs go: requests, runs' answers, wakes, services' nudges.
    let input: AsyncStream<HostInput>.Continuation
    /// Some service instance staged restorable bytes the loop has not taken yet.
    let hasStagedRestorableState = Atomic<Bool>(false)
    /// The loop waits for input outside any request (`HostLoop.nextIdleInput`).
    let isLoopIdle = Atomic<Bool>(false)
    /// The host's own figures.
    let metrics: HostMetrics

    init(status: HostStatus, input: AsyncStream<HostInput>.Continuation, metrics: HostMetrics) {
        self.published = Mutex(Published(status: status))
        self.input = input
        self.metrics = metrics
    }

    func publish(status: HostStatus) {
        published.withLock { $0.status = status }
        metrics.show(status)
    }

    /// A request's end: its status published, and reported as `.ready` (`READY=1`, after a
    /// launch or a reload) or, when it differs from the last one reported, as `.status`.
    /// The observers hear each status reported, once per request, after the report.
    func finishRequest(with status: HostStatus, ready: Bool) {
        let (changed, observers) = published.withLock { published in
            defer { (published.status, published.reported) = (status, status) }
            return (published.reported != status, published.observers)
        }
        metrics.show(status)
        if ready {
            report(.ready(status))
        } else if changed {
            report(.status(status))
        }
        if ready || changed {
            for observer in observers.values { observer(status) }
        }
    }

    /// Calls `observer` with each status a request ends with, when it changed; returns what
    /// `stopObserving(_:)` takes.
    func observe(_ observer: @escaping @Sendable (HostStatus) -> Void) -> Int {
        published.withLock { published in
            published.nextObserver += 1
            published.observers[published.nextObserver] = observer
            return published.nextObserver
        }
    }

    func stopObserving(_ token: Int) {
        _ = published.withLock { $0.observers.removeValue(forKey: token) }
    }

    func publish(launch: Result<LaunchOptions, LaunchFailure>) {
        published.withLock { $0.launch = launch }
    }

    /// The run of hook calls in progress (`hookInProgress` looks into it); nil once the runs
    /// of a request are over, so no instance of an earlier configuration stays referenced.
    func publish(run: HookRun?) {
        published.withLock { $0.run = run }
    }

    func report(_ report: HostReport) {
        published.withLock { $0.reports }?.yield(report)
    }

    /// A service reported its health (`ApplicationHandle.reportUnhealthy(_:)`): the loop looks
    /// when it changed (saying the same again wakes nothing).
    func healthReported(_ problem: String?, in report: ReportedHealth) {
        if report.set(problem) { input.yield(.healthReported) }
    }

    /// Stages a service instance's bytes for the loop. Nudges the loop only when it is idle and
    /// nothing was staged since it last looked: a request in progress takes them at its end, and
    /// a loop that goes idle looks at the flag first (`HostLoop.nextIdleInput`).
    func stageRestorableState(_ bytes: [UInt8], in staged: StagedRestorableState) {
        staged.stage(bytes)
        nudgeRestorableState()
    }

    /// Bytes are staged: the loop takes them at the end of the request in progress, or as a
    /// request of its own when idle.
    func nudgeRestorableState() {
        if !hasStagedRestorableState.exchange(true, ordering: .sequentiallyConsistent),
            isLoopIdle.load(ordering: .sequentiallyConsistent)
        {
            input.yield(.restorableStateStaged)
        }
    }
}

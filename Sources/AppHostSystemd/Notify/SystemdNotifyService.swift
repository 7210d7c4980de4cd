import AppHost
import ServiceLifecycle

/// Tells systemd where the host stands, as a `Service`: every `HostReport` as `sd_notify` fields
/// (`READY=1`, `STATUS=`, `RELOADING=1` with `MONOTONIC_USEC=`, `STOPPING=1`,
/// `EXTEND_TIMEOUT_USEC=`, `ERRNO=`), in order, until the host's run ends.
///
/// List it before the host in the `ServiceGroup`: the group shuts its services down in reverse
/// order, so the host terminates (and reports its last status) before this service is told to end.
public struct SystemdNotifyService: Service {
    let reports: AsyncStream<HostReport>
    let notifier: SystemdNotifier
    let reloadStatus: String

    /// Takes the host's report stream now, so nothing the host reports once it runs is missed.
    /// `reloadStatus` is the `STATUS=` that goes with `RELOADING=1`.
    public init(host: PluggableApplicationHost, notifier: SystemdNotifier, reloadStatus: String = "reloading") {
        self.reports = host.reports
        self.notifier = notifier
        self.reloadStatus = reloadStatus
    }

    /// Forwards reports until the host's run ended (a graceful shutdown does not cut it short, so
    /// the last status still goes out), then waits for its turn to shut down.
    public func run() async {
        // `EXTEND_TIMEOUT_USEC=` for each of a thousand services would be a thousand datagrams:
        // one is sent when the last one is a second old, or when the next step may take longer
        // than the last one allowed for.
        var lastExtension: (at: ContinuousClock.Instant, next: Duration)?
        for await report in reports {
            switch report {
            case .status(let status), .stopped(let status): notifier.status(status.description)
            case .progress(let next):
                let now = ContinuousClock.now
                if let last = lastExtension, now - last.at < .seconds(1), next <= last.next { continue }
                lastExtension = (now, next)
                notifier.extendTimeout(by: next + .seconds(1))
            case .ready(let status): notifier.ready(status: status.description)
            case .reloading: notifier.reloading(status: reloadStatus)
            case .stopping(let reason): notifier.stopping(status: "stopping (\(reason))")
            case .launchFailed(let failure, _): notifier.launchFailed(status: "launch failed: \(failure)", errno: failure.errnoValue)
            }
        }
        try? await gracefulShutdown()
    }
}

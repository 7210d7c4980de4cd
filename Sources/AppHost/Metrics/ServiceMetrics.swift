import CoreMetrics
import Synchronization

/// One service instance's figures: how long each of its hooks took
/// (`apphost_hook_duration_seconds{service,hook}`, a histogram where the backend makes timers
/// histograms, as Prometheus does), how often one overran its deadline
/// (`apphost_hook_overruns_total{service}`) and how often the host restarted it
/// (`apphost_service_restarts_total{service}`).
///
/// The counters are labelled by the service's name alone: an instance restart's new
/// `ServiceMetrics` gets the backend's same series (swift-prometheus hands out one per name and
/// labels), so its restarts go on counting where the old instance's stopped.
///
/// A timer is made the first time its hook is called, so a service shows only the hooks it got;
/// after that a call costs one lock and a lookup beside the backend's own record.
final class ServiceMetrics: Sendable {
    let serviceName: String
    let factory: any MetricsFactory
    private let timers: Mutex<[String: CoreMetrics.Timer]>
    private let overruns: CoreMetrics.Counter
    private let restarts: CoreMetrics.Counter
    /// False with swift-metrics' no-op factory (nothing bootstrapped): a hook call then
    /// records nothing at all.
    private let isRecording: Bool

    init(serviceName: String, factory: any MetricsFactory) {
        self.serviceName = serviceName
        self.factory = factory
        isRecording = !(factory is NOOPMetricsHandler)
        timers = Mutex([:])
        overruns = CoreMetrics.Counter(label: "apphost_hook_overruns_total", dimensions: [("service", serviceName)], factory: factory)
        restarts = CoreMetrics.Counter(label: "apphost_service_restarts_total", dimensions: [("service", serviceName)], factory: factory)
    }

    /// `hook` took `duration`, however it ended.
    func recordHook(_ hook: String, duration: Duration) {
        guard isRecording else { return }
        let timer = timers.withLock { timers in
            if let timer = timers[hook] { return timer }
            let timer = CoreMetrics.Timer(label: "apphost_hook_duration_seconds", dimensions: [("service", serviceName), ("hook", hook)], factory: factory)
            timers[hook] = timer
            return timer
        }
        let (seconds, attoseconds) = duration.components
        timer.recordNanoseconds(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// A hook ran past its deadline.
    func countOverrun() {
        overruns.increment()
    }

    /// Its run loop, or the whole service, was started again under its `RestartPolicy`.
    func countRestart() {
        restarts.increment()
    }
}

import CoreMetrics

/// What logind's preparations cost, through the host's metrics factory: how often the machine
/// was about to sleep or shut down (`apphost_logind_prepares_total{cause}`), and how long logind
/// waited for the daemon each time, from its `PrepareFor…(true)` to the inhibitor's release
/// (`apphost_logind_release_seconds{cause}`, a histogram where the backend makes timers
/// histograms, as Prometheus does).
struct LogindMetrics: Sendable {
    private let prepares: [LogindClient.Inhibition: CoreMetrics.Counter]
    private let releases: [LogindClient.Inhibition: CoreMetrics.Timer]

    init(factory: any MetricsFactory) {
        var prepares: [LogindClient.Inhibition: CoreMetrics.Counter] = [:]
        var releases: [LogindClient.Inhibition: CoreMetrics.Timer] = [:]
        for what in LogindClient.Inhibition.allCases {
            prepares[what] = CoreMetrics.Counter(label: "apphost_logind_prepares_total", dimensions: [("cause", what.rawValue)], factory: factory)
            releases[what] = CoreMetrics.Timer(label: "apphost_logind_release_seconds", dimensions: [("cause", what.rawValue)], factory: factory)
        }
        self.prepares = prepares
        self.releases = releases
    }

    func countPrepare(_ what: LogindClient.Inhibition) {
        prepares[what]?.increment()
    }

    func recordRelease(_ what: LogindClient.Inhibition, after waited: Duration) {
        let (seconds, attoseconds) = waited.components
        releases[what]?.recordNanoseconds(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }
}

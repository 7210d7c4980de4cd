import AppHost
import CoreMetrics

/// The counters that span runs, fed from what analytics keeps: `apphost_launches_total`,
/// `apphost_exits_total{cause}` and `apphost_transitions_total{to}`. At launch they take the
/// kept totals (so a restart never sends them back to 0 and Prometheus' `increase()` works
/// across restarts); after that each counted event adds one.
struct AnalyticsMetrics: Sendable {
    let launches: CoreMetrics.Counter
    let exits: [String: CoreMetrics.Counter]
    let backgroundEntries: CoreMetrics.Counter
    let foregroundEntries: CoreMetrics.Counter

    init(factory: any MetricsFactory) {
        launches = CoreMetrics.Counter(label: "apphost_launches_total", factory: factory)
        // One series per kind of cause (`ExitCause.kind`): which signal, which code stays in
        // `apphostd analytics`, so the series stay few.
        exits = Dictionary(uniqueKeysWithValues: ExitCause.kinds.map {
            ($0, CoreMetrics.Counter(label: "apphost_exits_total", dimensions: [("cause", $0)], factory: factory))
        })
        backgroundEntries = CoreMetrics.Counter(label: "apphost_transitions_total", dimensions: [("to", "background")], factory: factory)
        foregroundEntries = CoreMetrics.Counter(label: "apphost_transitions_total", dimensions: [("to", "foreground")], factory: factory)
    }

    /// Sets every counter to the report's total. A reload can restart analytics in a running
    /// process, where the counters already hold the totals: they are set again from the report.
    func show(_ report: AnalyticsReport) {
        set(launches, report.launches)
        var byCause: [String: Int] = [:]
        for (description, count) in report.exitsByCause {
            byCause[ExitCause.kind(ofDescription: description), default: 0] += count
        }
        for (cause, counter) in exits { set(counter, byCause[cause] ?? 0) }
        set(backgroundEntries, report.backgroundEntries)
        set(foregroundEntries, report.foregroundEntries)
    }

    /// A reset and an increment, even by 0: the daemon's backend applies the two together, so
    /// the textfile never shows the 0 between them (`TextfileMetricsFactory`).
    private func set(_ counter: CoreMetrics.Counter, _ value: Int) {
        counter.reset()
        counter.increment(by: Int64(value))
    }
}

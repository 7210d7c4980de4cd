import CoreMetrics
import Logging
import Prometheus
import Synchronization

/// The daemon's swift-metrics backend: swift-prometheus' `PrometheusCollectorRegistry`, guarded
/// so that no figure can stop the process, with a `daemon` label on every series and a word to
/// the textfile writer whenever a figure changes.
///
/// swift-prometheus stops the process (`fatalError`) when a name is reused with another type,
/// when one name is made both with and without labels, and when a series repeats a label name.
/// This factory refuses such a metric instead (it records nowhere, and the refusal is logged
/// once per name): a user's service can never crash the daemon with its figures. Names and label
/// names are made valid for Prometheus first (`my.counter` → `my_counter`), so the registry's own
/// fixing never merges two names behind the guard's back; a user's own `daemon` label becomes
/// `exported_daemon`, as Prometheus renames a clashing label.
public final class TextfileMetricsFactory: MetricsFactory, Sendable {
    /// What a name was first made as; a name keeps its kind for the life of the registry.
    enum Kind: String, Sendable {
        case counter, gauge, timer, recorder = "histogram recorder"
    }

    /// The registry the textfile is rendered from.
    public let registry: PrometheusCollectorRegistry
    /// The value of the `daemon` label on every series.
    public let daemon: String
    private let prometheus: PrometheusMetricsFactory
    private let logger: Logger
    private let changed: @Sendable () -> Void
    private let kinds = Mutex<[String: Kind]>([:])
    /// Held while rendering, and while a counter's deferred reset and the increment after it
    /// are applied together (`ChangeReporting.Counter`).
    let rendering = ChangeReporting.RenderingLock()
    private let refused = Mutex<Set<String>>([])

    /// Buckets of `apphost_hook_duration_seconds`: a decade each from 1 ms (most hooks take
    /// microseconds) to the default deadline, 5 s. Few, because the histogram is most of the
    /// textfile (each bucket is a line per service and hook, and a fleet's node_exporter reads
    /// every line of every daemon at each scrape: 26 KB per daemon with 9 buckets).
    static let hookDurationBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(10), .milliseconds(100), .seconds(1), .seconds(5),
    ]

    /// A factory over `registry` whose series carry `daemon="<daemon>"`; `changed` is called
    /// after every record (cheap: the textfile writer only sets a flag).
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), daemon: String, logger: Logger, changed: @escaping @Sendable () -> Void = {}) {
        self.registry = registry
        self.daemon = daemon
        self.logger = logger
        self.changed = changed
        var prometheus = PrometheusMetricsFactory(registry: registry)
        prometheus.durationHistogramBuckets = ["apphost_hook_duration_seconds": Self.hookDurationBuckets]
        self.prometheus = prometheus
    }

    /// The registry in Prometheus' text format, as node_exporter's textfile collector reads it
    /// (no timestamps).
    public func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        rendering.mutex.withLock { _ in registry.emit(into: &buffer) }
        return buffer
    }

    // MARK: Names

    /// `name` with every character Prometheus does not allow in a metric name made `_`.
    static func metricName(_ name: String) -> String {
        validName(name, allowColon: true)
    }

    static func validName(_ name: String, allowColon: Bool) -> String {
        var scalars = String.UnicodeScalarView()
        for (index, scalar) in name.unicodeScalars.enumerated() {
            let isLetter = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_" || (allowColon && scalar == ":")
            let isDigit = scalar >= "0" && scalar <= "9"
            if index == 0, isDigit { scalars.append("_") }
            scalars.append(isLetter || isDigit ? scalar : "_")
        }
        return scalars.isEmpty ? "_" : String(scalars)
    }

    /// Valid, unique label names, `daemon` first; a later label repeating a name is dropped.
    func labels(_ dimensions: [(String, String)]) -> [(String, String)] {
        var result = [("daemon", daemon)]
        for (name, value) in dimensions {
            var label = Self.validName(name, allowColon: false)
            if label == "daemon" { label = "exported_daemon" }
            if label.hasPrefix("__") { label = "x" + label }
            guard !result.contains(where: { $0.0 == label }) else { continue }
            result.append((label, value))
        }
        return result
    }

    /// The name to make, or nil when it was made as another kind (logged once).
    private func admit(_ label: String, as kind: Kind) -> String? {
        let name = Self.metricName(label)
        let existing = kinds.withLock { kinds in
            if let existing = kinds[name] { return existing }
            kinds[name] = kind
            return kind
        }
        guard existing != kind else { return name }
        if refused.withLock({ $0.insert("\(name) \(kind)").inserted }) {
            logger.error(
                "metrics: \(name) is already a \(existing.rawValue); a \(kind.rawValue) of that name records nowhere",
                metadata: ["metric": "\(name)"]
            )
        }
        return nil
    }

    // MARK: MetricsFactory

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard let name = admit(label, as: .counter) else { return NOOPMetricsHandler.instance }
        return ChangeReporting.Counter(prometheus.makeCounter(label: name, dimensions: labels(dimensions)), changed, rendering: rendering)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard let name = admit(label, as: .counter) else { return NOOPMetricsHandler.instance }
        return ChangeReporting.FloatingPointCounter(prometheus.makeFloatingPointCounter(label: name, dimensions: labels(dimensions)), changed)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard let name = admit(label, as: aggregate ? .recorder : .gauge) else { return NOOPMetricsHandler.instance }
        return ChangeReporting.Recorder(prometheus.makeRecorder(label: name, dimensions: labels(dimensions), aggregate: aggregate), changed)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard let name = admit(label, as: .gauge) else { return NOOPMetricsHandler.instance }
        return ChangeReporting.Meter(prometheus.makeMeter(label: name, dimensions: labels(dimensions)), changed)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard let name = admit(label, as: .timer) else { return NOOPMetricsHandler.instance }
        return ChangeReporting.Timer(prometheus.makeTimer(label: name, dimensions: labels(dimensions)), changed)
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        if let handler = handler as? ChangeReporting.Counter { prometheus.destroyCounter(handler.base) }
    }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let handler = handler as? ChangeReporting.FloatingPointCounter { prometheus.destroyFloatingPointCounter(handler.base) }
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        if let handler = handler as? ChangeReporting.Recorder { prometheus.destroyRecorder(handler.base) }
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        if let handler = handler as? ChangeReporting.Meter { prometheus.destroyMeter(handler.base) }
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        if let handler = handler as? ChangeReporting.Timer { prometheus.destroyTimer(handler.base) }
    }
}

/// Handlers that record into the registry's own and then say that a figure changed.
enum ChangeReporting {
    /// Held while the registry renders.
    final class RenderingLock: Sendable {
        let mutex = Mutex<Void>(())
    }

    /// A counter whose `reset()` waits for the next increment and is applied with it, out of
    /// the renderer's sight: a counter set to a kept total (reset, then increment by the total)
    /// never shows the 0 in between, which Prometheus would read as a restart of the counter
    /// and `increase()` as the whole total counted again.
    final class Counter: CounterHandler, Sendable {
        let base: any CounterHandler
        let changed: @Sendable () -> Void
        let rendering: RenderingLock
        private let isResetPending = Atomic<Bool>(false)

        init(_ base: any CounterHandler, _ changed: @escaping @Sendable () -> Void, rendering: RenderingLock) {
            (self.base, self.changed, self.rendering) = (base, changed, rendering)
        }

        func increment(by amount: Int64) {
            if isResetPending.exchange(false, ordering: .acquiringAndReleasing) {
                rendering.mutex.withLock { _ in
                    base.reset()
                    base.increment(by: amount)
                }
            } else {
                base.increment(by: amount)
            }
            changed()
        }

        func reset() {
            isResetPending.store(true, ordering: .releasing)
        }
    }

    final class FloatingPointCounter: FloatingPointCounterHandler, Sendable {
        let base: any FloatingPointCounterHandler
        let changed: @Sendable () -> Void
        init(_ base: any FloatingPointCounterHandler, _ changed: @escaping @Sendable () -> Void) { (self.base, self.changed) = (base, changed) }
        func increment(by amount: Double) { base.increment(by: amount); changed() }
        func reset() { base.reset(); changed() }
    }

    final class Recorder: RecorderHandler, Sendable {
        let base: any RecorderHandler
        let changed: @Sendable () -> Void
        init(_ base: any RecorderHandler, _ changed: @escaping @Sendable () -> Void) { (self.base, self.changed) = (base, changed) }
        func record(_ value: Int64) { base.record(value); changed() }
        func record(_ value: Double) { base.record(value); changed() }
    }

    final class Meter: MeterHandler, Sendable {
        let base: any MeterHandler
        let changed: @Sendable () -> Void
        init(_ base: any MeterHandler, _ changed: @escaping @Sendable () -> Void) { (self.base, self.changed) = (base, changed) }
        func set(_ value: Int64) { base.set(value); changed() }
        func set(_ value: Double) { base.set(value); changed() }
        func increment(by amount: Double) { base.increment(by: amount); changed() }
        func decrement(by amount: Double) { base.decrement(by: amount); changed() }
    }

    final class Timer: TimerHandler, Sendable {
        let base: any TimerHandler
        let changed: @Sendable () -> Void
        init(_ base: any TimerHandler, _ changed: @escaping @Sendable () -> Void) { (self.base, self.changed) = (base, changed) }
        func recordNanoseconds(_ duration: Int64) { base.recordNanoseconds(duration); changed() }
    }
}

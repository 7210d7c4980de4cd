import CoreMetrics
import Synchronization

/// The host's own figures, recorded through swift-metrics with the factory the host was given
/// (`PluggableApplicationHost.Configuration.metricsFactory`), so any backend that implements
/// `MetricsFactory` shows them: `apphost_state{state}`, `apphost_session_locked`,
/// `apphost_healthy`, `apphost_services{status}`, `apphost_memory_warnings_total{level}` and
/// `apphost_reloads_total{result}`, and the machine's conditions: `apphost_network{status}`,
/// `apphost_network_expensive`, `apphost_low_power_mode`, `apphost_on_battery` and
/// `apphost_battery_warning{level}`; each service's `ServiceMetrics` adds its hooks' figures and
/// its restarts.
///
/// `apphost_services{status}` counts each service once: `running`, `restarting` (a restart
/// waits), `failed` (its restarts gave way, disabled or not: a required one keeps running
/// unhealthy) or `disabled` (for another reason), so the four add up to the services.
///
/// Gauges change only when what they show changed: a request that moves nothing records nothing.
final class HostMetrics: Sendable {
    /// Where a service is counted in `apphost_services{status}`.
    enum ServiceStatus: String, CaseIterable {
        case running, restarting, failed, disabled

        init(_ health: ServiceHealth) {
            if health.failure != nil {
                self = .failed
            } else if !health.isEnabled {
                self = .disabled
            } else {
                self = health.pendingRestart != nil ? .restarting : .running
            }
        }
    }

    /// How many services are in each status: four integers, so a status costs no allocation.
    struct StatusCounts: Equatable {
        var running = 0, restarting = 0, failed = 0, disabled = 0

        subscript(status: ServiceStatus) -> Int {
            get {
                switch status {
                case .running: running
                case .restarting: restarting
                case .failed: failed
                case .disabled: disabled
                }
            }
            set {
                switch status {
                case .running: running = newValue
                case .restarting: restarting = newValue
                case .failed: failed = newValue
                case .disabled: disabled = newValue
                }
            }
        }
    }

    /// What the gauges show now.
    private struct Shown: Equatable {
        var state: ApplicationState?
        var isSessionLocked = false
        var isHealthy = true
        /// Nil until first shown, so every status is recorded then, zeros included.
        var services: StatusCounts?
        var network = NetworkPath.unknown
        var power = PowerState.unknown
    }

    let factory: any MetricsFactory
    private let states: [(ApplicationState, CoreMetrics.Gauge)]
    private let sessionLocked: CoreMetrics.Gauge
    private let healthy: CoreMetrics.Gauge
    private let services: [(ServiceStatus, CoreMetrics.Gauge)]
    private let warnings: CoreMetrics.Counter
    private let criticalWarnings: CoreMetrics.Counter
    private let appliedReloads: CoreMetrics.Counter
    private let refusedReloads: CoreMetrics.Counter
    private let network: [(NetworkPath.Status, CoreMetrics.Gauge)]
    private let networkExpensive: CoreMetrics.Gauge
    private let lowPowerMode: CoreMetrics.Gauge
    private let onBattery: CoreMetrics.Gauge
    private let batteryWarning: [(PowerState.BatteryWarningLevel, CoreMetrics.Gauge)]
    private let shown: Mutex<Shown>
    /// The service list last counted, and its counts: the loop hands the same list (one
    /// buffer) to every status until a service's health changes, so a status costs no pass
    /// over the services then (`Array.==` first compares the buffers). A status depends only on
    /// fields that `ServiceHealth.==` compares.
    private let counted: Mutex<(services: [ServiceHealth], counts: StatusCounts)>

    init(factory: any MetricsFactory) {
        self.factory = factory
        states = ApplicationState.allCases.map { ($0, CoreMetrics.Gauge(label: "apphost_state", dimensions: [("state", $0.rawValue)], factory: factory)) }
        sessionLocked = CoreMetrics.Gauge(label: "apphost_session_locked", factory: factory)
        healthy = CoreMetrics.Gauge(label: "apphost_healthy", factory: factory)
        services = ServiceStatus.allCases.map { ($0, CoreMetrics.Gauge(label: "apphost_services", dimensions: [("status", $0.rawValue)], factory: factory)) }
        warnings = CoreMetrics.Counter(label: "apphost_memory_warnings_total", dimensions: [("level", MemoryWarningLevel.warning.rawValue)], factory: factory)
        criticalWarnings = CoreMetrics.Counter(label: "apphost_memory_warnings_total", dimensions: [("level", MemoryWarningLevel.critical.rawValue)], factory: factory)
        appliedReloads = CoreMetrics.Counter(label: "apphost_reloads_total", dimensions: [("result", "applied")], factory: factory)
        refusedReloads = CoreMetrics.Counter(label: "apphost_reloads_total", dimensions: [("result", "refused")], factory: factory)
        network = NetworkPath.Status.allCases.map { ($0, CoreMetrics.Gauge(label: "apphost_network", dimensions: [("status", $0.rawValue)], factory: factory)) }
        networkExpensive = CoreMetrics.Gauge(label: "apphost_network_expensive", factory: factory)
        lowPowerMode = CoreMetrics.Gauge(label: "apphost_low_power_mode", factory: factory)
        onBattery = CoreMetrics.Gauge(label: "apphost_on_battery", factory: factory)
        batteryWarning = PowerState.BatteryWarningLevel.allCases.map {
            ($0, CoreMetrics.Gauge(label: "apphost_battery_warning", dimensions: [("level", $0.rawValue)], factory: factory))
        }
        shown = Mutex(Shown())
        counted = Mutex(([], StatusCounts()))
    }

    /// Shows `status`; records only the gauges whose value changed.
    func show(_ status: HostStatus) {
        var now = Shown(state: status.state, isSessionLocked: status.sessionLockReason != nil, isHealthy: status.healthProblem == nil)
        (now.network, now.power) = (status.networkPath, status.powerState)
        let counts = counts(of: status.services)
        now.services = counts
        let before = shown.withLock { shown in
            defer { shown = now }
            return shown
        }
        guard now != before else { return }
        if now.state != before.state {
            for (state, gauge) in states where state == now.state || state == before.state || before.state == nil {
                gauge.record(state == now.state ? 1 : 0)
            }
        }
        if now.isSessionLocked != before.isSessionLocked || before.state == nil { sessionLocked.record(now.isSessionLocked ? 1 : 0) }
        if now.isHealthy != before.isHealthy || before.state == nil { healthy.record(now.isHealthy ? 1 : 0) }
        for (status, gauge) in services where before.services?[status] != counts[status] {
            gauge.record(counts[status])
        }
        showConditions(now, before: before)
    }

    /// The machine's conditions: all of them the first time, then what changed.
    private func showConditions(_ now: Shown, before: Shown) {
        let first = before.state == nil
        if first || now.network.status != before.network.status {
            for (status, gauge) in network { gauge.record(status == now.network.status ? 1 : 0) }
        }
        if first || now.network.isExpensive != before.network.isExpensive { networkExpensive.record(now.network.isExpensive ? 1 : 0) }
        if first || now.power.isLowPowerModeEnabled != before.power.isLowPowerModeEnabled { lowPowerMode.record(now.power.isLowPowerModeEnabled ? 1 : 0) }
        if first || now.power.isOnBattery != before.power.isOnBattery { onBattery.record(now.power.isOnBattery ? 1 : 0) }
        if first || now.power.batteryWarningLevel != before.power.batteryWarningLevel {
            for (level, gauge) in batteryWarning { gauge.record(level == now.power.batteryWarningLevel ? 1 : 0) }
        }
    }

    /// How many of `services` are in each status; counted again only when the list changed.
    private func counts(of services: [ServiceHealth]) -> StatusCounts {
        let known = counted.withLock { counted -> StatusCounts? in
            guard counted.services == services else { return nil }
            // The same health in a new list: keep the new one, so the next status finds it by
            // its buffer.
            counted.services = services
            return counted.counts
        }
        if let known { return known }
        var counts = StatusCounts()
        for service in services { counts[ServiceStatus(service)] += 1 }
        counted.withLock { $0 = (services, counts) }
        return counts
    }

    /// A memory warning went out to the services.
    func countMemoryWarning(_ level: MemoryWarningLevel) {
        (level == .critical ? criticalWarnings : warnings).increment()
    }

    /// A reload was applied or refused (the running configuration kept).
    func countReload(applied: Bool) {
        (applied ? appliedReloads : refusedReloads).increment()
    }
}

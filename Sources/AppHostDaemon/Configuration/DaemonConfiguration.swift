import AppHost
import AppHostSystemd
import Logging

/// The daemon's whole config file (`apphostd.yaml`), loaded and validated.
///
/// A loaded value is valid: every service in it was built once through its registry factory,
/// so launching or reloading with it cannot fail on a settings error. Load
/// one with `init(contentsOf:registry:)` to embed the host with the daemon's config file, or to
/// validate a file the way `apphostd check` does.
public struct DaemonConfiguration: Sendable {
    /// The host's memory-pressure watch: PSI thresholds for the two warning levels.
    public struct MemoryPressure: Sendable, Equatable {
        /// Whether the daemon watches memory pressure at all.
        public internal(set) var enabled: Bool = true
        /// Stall time per window (`some`) that raises a warning.
        public internal(set) var warningStall: Duration = .milliseconds(200)
        /// Stall time per window (`full`) that raises a critical warning.
        public internal(set) var criticalStall: Duration = .milliseconds(800)
        /// The PSI window both stalls are measured over.
        public internal(set) var window: Duration = .seconds(2)
    }

    /// `host.metrics:`: where the daemon writes its figures for node_exporter's textfile
    /// collector.
    public struct Metrics: Sendable, Equatable {
        /// The `*.prom` file to write; nil: no metrics file.
        public internal(set) var textfile: String?
        /// The `daemon` label as set in the file; nil: `daemonLabel` derives it.
        public internal(set) var daemon: String?

        /// The value of the `daemon` label on every series: as set, else the textfile's base
        /// name without `.prom` (`/run/apphostd-metrics/kiosk.prom` → `kiosk`), so daemons that
        /// share one collector directory never share a series.
        public var daemonLabel: String {
            if let daemon { return daemon }
            let name = textfile?.split(separator: "/").last.map(String.init) ?? "apphostd.prom"
            return String(name.dropLast(".prom".count))
        }
    }

    /// One entry of `services:`, in the file's order.
    public struct ServiceEntry: Sendable {
        /// The unique instance name.
        public internal(set) var name: String
        /// The registry type it is built from.
        public internal(set) var type: String
        /// Whether a failed launch of this service fails the daemon.
        public internal(set) var isRequired: Bool
        /// Hook deadline override; nil uses `host.hook-deadline`.
        public internal(set) var deadline: Duration?
        /// Launch-hook deadline override; nil uses `host.launch-deadline`.
        public internal(set) var launchDeadline: Duration?
        /// What the host does when its run loop ends on its own (`restart:` and the keys after it).
        public internal(set) var restart: RestartPolicy = .temporary
        /// The service's own `settings:` section.
        public internal(set) var settings: ServiceSection
        /// The entry's line in the file, when known.
        public internal(set) var line: Int?
        /// Its children and how they combine, when the entry is a composite.
        public internal(set) var composite: Composite? = nil

        /// The entry for people: its name, and a composite's kind and children
        /// (`notify (first-of: desktop, journal)`).
        public var outline: String {
            guard let composite else { return name }
            let children = composite.children.map(\.outline).joined(separator: ", ")
            switch composite.kind {
            case .firstOf: return "\(name) (first-of: \(children))"
            case .group: return "\(name) (group: \(children))"
            case .oneOf(let chosen, let reason): return "\(name) (one-of: \(chosen), by \(reason))"
            }
        }

        /// The descriptor for `PluggableApplicationHost`, built with the registry's factories.
        func descriptor(registry: ServiceRegistry) -> ServiceDescriptor {
            if let composite {
                return ServiceDescriptor(name: name, isRequired: isRequired, composite: ServiceComposite(
                    composite.kind, children: composite.children.map { $0.descriptor(registry: registry) }
                ))
            }
            var descriptor = ServiceDescriptor(
                name: name, type: type, isRequired: isRequired, deadline: deadline, launchDeadline: launchDeadline,
                configuration: settings, registry: registry
            )
            descriptor.restart = restart
            return descriptor
        }
    }

    /// A composite entry's children (`first-of:`, `one-of:`, `group:`) and how they combine.
    public struct Composite: Sendable {
        /// How the children launch and combine; a one-of's choice is made when the file is read.
        public internal(set) var kind: ServiceComposite.Kind
        /// The children, in the file's order.
        public internal(set) var children: [ServiceEntry]
    }

    /// The file it was read from (as given), or the name passed with the text.
    public internal(set) var file: String
    /// Default deadline of every lifecycle hook.
    public internal(set) var hookDeadline: Duration = .seconds(5)
    /// Default deadline of the launch hooks.
    public internal(set) var launchDeadline: Duration = .seconds(30)
    /// How long terminate may take in all.
    public internal(set) var terminateDeadline: Duration = .seconds(10)
    /// How long a required service may stay in one hook before the host counts as unhealthy
    /// (`host.stall-limit`); nil: three times each service's hook deadline.
    public internal(set) var stallLimit: Duration?
    /// Where services keep state; resolved from the file or the environment.
    public internal(set) var stateDirectory: String
    /// The daemon's log level.
    public internal(set) var logLevel: Logger.Level = .info
    /// Memory-pressure thresholds.
    public internal(set) var memoryPressure = MemoryPressure()
    /// The metrics textfile.
    public internal(set) var metrics = Metrics()
    /// Whether the daemon follows logind's sleep and shutdown (`host.logind`, on by default;
    /// without logind it says so once and runs on).
    public internal(set) var followsLogind = true
    /// Whether significant time changes reach the services (`host.time-changes`, on by
    /// default): the clock set, the time zone changed, midnight, daylight saving.
    public internal(set) var followsTimeChanges = true
    /// Where the network path is read (`host.network`: `auto`, `networkd`, `networkmanager`);
    /// nil: not followed (`false`).
    public internal(set) var networkPathSource: NetworkPathSource? = .automatic
    /// Whether low power mode and the battery are followed (`host.power`, on by default).
    public internal(set) var followsPowerState = true
    /// Whose screen lock the session-lock service follows (`host.logind-session`: `auto`,
    /// `user:NAME` or a session id).
    public internal(set) var logindSession: LogindEdge.WatchedSession = .auto
    /// The services, in registration order.
    public internal(set) var services: [ServiceEntry]

    /// Descriptors for `PluggableApplicationHost`, built with the registry's factories.
    public func serviceDescriptors(registry: ServiceRegistry) -> [ServiceDescriptor] {
        services.map { $0.descriptor(registry: registry) }
    }
}

import AppHost
import Logging

/// The daemon's whole config file (`apphostd.yaml`), loaded and validated.
///
/// A value of this type is always valid: every service in it was built once through its
/// registry factory, so launching or reloading with it cannot fail on a settings error. Load
/// one with `init(contentsOf:registry:)` to embed the host with the daemon's config file, or to
/// validate a file the way `apphostd check` does.
public struct DaemonConfiguration: Sendable {
    /// The host's memory-pressure watch: PSI thresholds for the two warning levels.
    public struct MemoryPressure: Sendable, Equatable {
        /// Whether the daemon watches memory pressure at all.
        public var enabled: Bool = true
        /// Stall time per window (`some`) that raises a warning.
        public var warningStall: Duration = .milliseconds(200)
        /// Stall time per window (`full`) that raises a critical warning.
        public var criticalStall: Duration = .milliseconds(800)
        /// The PSI window both stalls are measured over.
        public var window: Duration = .seconds(2)
    }

    /// One entry of `services:`, in the file's order.
    public struct ServiceEntry: Sendable {
        /// The unique instance name.
        public var name: String
        /// The registry type it is built from.
        public var type: String
        /// Whether a failed launch of this service fails the daemon.
        public var isRequired: Bool
        /// Hook deadline override; nil uses `host.hook-deadline`.
        public var deadline: Duration?
        /// Launch-hook deadline override; nil uses `host.launch-deadline`.
        public var launchDeadline: Duration?
        /// The service's own `settings:` section.
        public var settings: ServiceConfiguration
        /// The entry's line in the file, when known.
        public var line: Int?
    }

    /// The file it was read from (as given), or the name passed with the text.
    public var file: String
    /// Default deadline of every lifecycle hook.
    public var hookDeadline: Duration = .seconds(5)
    /// Default deadline of the launch hooks.
    public var launchDeadline: Duration = .seconds(30)
    /// How long terminate may take in all.
    public var terminateDeadline: Duration = .seconds(10)
    /// Where services keep state; resolved from the file or the environment.
    public var stateDirectory: String
    /// The daemon's log level.
    public var logLevel: Logger.Level = .info
    /// Memory-pressure thresholds.
    public var memoryPressure = MemoryPressure()
    /// The services, in registration order.
    public var services: [ServiceEntry]

    /// Descriptors for `PluggableApplicationHost`, built with the registry's factories.
    public func serviceDescriptors(registry: ServiceRegistry) -> [ServiceDescriptor] {
        services.map { entry in
            ServiceDescriptor(
                name: entry.name, type: entry.type, isRequired: entry.isRequired,
                deadline: entry.deadline, launchDeadline: entry.launchDeadline,
                configuration: entry.settings, registry: registry
            )
        }
    }
}

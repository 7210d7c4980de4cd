import AppHost
import Logging

/// The daemon's whole config file, parsed and validated by `ConfigurationLoader`.
///
/// A value of this type is always valid: every service in it was built once through its
/// registry factory, so launching or reloading with it cannot fail on a settings error.
struct DaemonConfiguration: Sendable {
    /// The host's memory-pressure watch: PSI thresholds for the two warning levels.
    struct MemoryPressure: Sendable, Equatable {
        /// Whether the daemon watches memory pressure at all.
        var enabled: Bool = true
        /// Stall time per window (`some`) that raises a warning.
        var warningStall: Duration = .milliseconds(200)
        /// Stall time per window (`full`) that raises a critical warning.
        var criticalStall: Duration = .milliseconds(800)
        /// The PSI window both stalls are measured over.
        var window: Duration = .seconds(2)
    }

    /// One entry of `services:`, in the file's order.
    struct ServiceEntry: Sendable {
        /// The unique instance name.
        var name: String
        /// The registry type it is built from.
        var type: String
        /// Whether a failed launch of this service fails the daemon.
        var isRequired: Bool
        /// Hook deadline override; nil uses `host.hook-deadline`.
        var deadline: Duration?
        /// Launch-hook deadline override; nil uses `host.launch-deadline`.
        var launchDeadline: Duration?
        /// The service's own `settings:` section.
        var settings: ServiceConfiguration
        /// The entry's line in the file, when known.
        var line: Int?
    }

    /// The file it was read from (as given), or the name passed with the text.
    var file: String
    /// Default deadline of every lifecycle hook.
    var hookDeadline: Duration = .seconds(5)
    /// Default deadline of the launch hooks.
    var launchDeadline: Duration = .seconds(30)
    /// How long terminate may take in all.
    var terminateDeadline: Duration = .seconds(10)
    /// Where services keep state; resolved from the file or the environment.
    var stateDirectory: String
    /// The daemon's log level.
    var logLevel: Logger.Level = .info
    /// Memory-pressure thresholds.
    var memoryPressure = MemoryPressure()
    /// The services, in registration order.
    var services: [ServiceEntry]

    /// Descriptors for `PluggableApplicationHost`, built with the registry's factories.
    func serviceDescriptors(registry: ServiceRegistry) -> [ServiceDescriptor] {
        services.map { entry in
            ServiceDescriptor(
                name: entry.name, type: entry.type, isRequired: entry.isRequired,
                deadline: entry.deadline, launchDeadline: entry.launchDeadline,
                configuration: entry.settings, registry: registry
            )
        }
    }
}

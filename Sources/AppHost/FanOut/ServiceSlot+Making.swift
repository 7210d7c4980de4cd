import Logging

extension ServiceSlot {
    /// The slot of `descriptor`'s service: `instance`, else one its factory builds now (a
    /// factory that throws leaves it disabled); its deadlines from its entry, else the host's;
    /// its handle's context with `options` (its restored bytes among them).
    init(
        id: Int, descriptor: ServiceDescriptor, instance: (any ApplicationService)?, options: LaunchOptions?,
        host configuration: PluggableApplicationHost.Configuration, logger hostLogger: Logger, outlet: HostOutlet, bus: MessageBus, sharedState: SharedStateStore
    ) {
        var problem: String?
        let service: any ApplicationService
        if let instance {
            service = instance
        } else {
            do {
                service = try descriptor.makeService()
            } catch {
                service = UnbuildableService()
                problem = "\(error)"
            }
        }
        var logger = hostLogger
        logger[metadataKey: "service"] = .string(descriptor.name)
        let staged = StagedRestorableState()
        var keep: (@Sendable ([UInt8]) -> Void)?
        if configuration.restorableState != nil {
            keep = { outlet.stageRestorableState($0, in: staged) }
        }
        let reportedHealth = ReportedHealth()
        self.init(
            id: id,
            descriptor: descriptor,
            service: service,
            logger: logger,
            health: ServiceHealth(name: descriptor.name, isRequired: descriptor.isRequired, type: descriptor.type, condition: .healthy),
            hookDeadline: .zero,
            launchDeadline: .zero,
            stallLimit: .zero,
            reportedHealth: reportedHealth,
            context: ApplicationHandle.Context(
                serviceName: descriptor.name, logger: logger, configuration: descriptor.configuration, bus: bus,
                launchOptions: options, stateDirectory: configuration.stateDirectory, keepRestorableState: keep,
                reportHealth: { outlet.healthReported($0, in: reportedHealth) },
                metrics: ServiceMetrics(serviceName: descriptor.name, factory: outlet.metrics.factory),
                sharedState: sharedState
            ),
            stagedState: staged
        )
        takeDeadlines(of: descriptor, host: configuration)
        if let problem { disable(reason: problem) }
    }

    /// Takes `descriptor`'s deadlines, else the host's: its hook and launch deadlines and the
    /// stall limit that follows from them.
    mutating func takeDeadlines(of descriptor: ServiceDescriptor, host configuration: PluggableApplicationHost.Configuration) {
        hookDeadline = descriptor.deadline ?? configuration.hookDeadline
        launchDeadline = descriptor.launchDeadline ?? configuration.launchDeadline
        stallLimit = Self.stallLimit(hookDeadline: hookDeadline, host: configuration)
    }

    /// A service's stall limit: the host's, else three times its hook deadline; never shorter
    /// than that deadline.
    static func stallLimit(hookDeadline: Duration, host configuration: PluggableApplicationHost.Configuration) -> Duration {
        max(configuration.stallLimit ?? hookDeadline * 3, hookDeadline)
    }
}

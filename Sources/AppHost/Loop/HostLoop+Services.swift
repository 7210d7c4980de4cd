import Logging
import ServiceContextModule

/// The services: built from descriptors, their run loops started and retired.
extension HostLoop {
    /// Builds the service (a factory that throws leaves it disabled).
    mutating func makeService(_ descriptor: ServiceDescriptor, instance: (any ApplicationService)? = nil) -> ServiceSlot {
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
        nextServiceID += 1
        var logger = self.logger
        logger[metadataKey: "service"] = .string(descriptor.name)
        // What it kept last: from the previous run at the launch, the newest bytes when a
        // reload adds it again or restarts it (its old instance's willTerminate included).
        restorable.takeStaged(from: services)
        var options = launchOptions
        options?.restoredState = restorable.services[descriptor.name]
        if machine.state != .notRunning, machine.state != .launching {
            // Added by a reload or restarted while the host runs: it launches into the host's
            // state, into the background as after an unclean exit there (didEnterBackground alone
            // follows its launch hooks), so its options say so rather than the host's launch's.
            options?.launchesIntoBackground = machine.state == .background
        }
        let staged = StagedRestorableState()
        let (outlet, sharedState) = (self.outlet, self.sharedState)
        var keep: (@Sendable ([UInt8]) -> Void)?
        if configuration.restorableState != nil {
            keep = { outlet.stageRestorableState($0, in: staged) }
        }
        let reportedHealth = ReportedHealth()
        let hookDeadline = descriptor.deadline ?? configuration.hookDeadline
        var hosted = ServiceSlot(
            id: nextServiceID,
            descriptor: descriptor,
            service: service,
            logger: logger,
            health: ServiceHealth(name: descriptor.name, isRequired: descriptor.isRequired, type: descriptor.type, condition: .healthy),
            hookDeadline: hookDeadline,
            launchDeadline: descriptor.launchDeadline ?? configuration.launchDeadline,
            stallLimit: stallLimit(hookDeadline: hookDeadline),
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
        if let problem { hosted.disable(reason: problem) }
        return hosted
    }

    /// Starts the service's `run(_:)` in a child task; what it does before it first suspends
    /// (subscribing to the bus) is done when this returns.
    mutating func startRunLoop(_ index: Int, group: inout DiscardingTaskGroup) {
        let (stop, stopper) = AsyncStream<Never>.makeStream()
        services[index].runLoopStop = stopper
        services[index].runLoopID += 1
        let now = ContinuousClock.now
        if services[index].supervisor == nil {
            services[index].supervisor = RestartSupervisor(policy: services[index].descriptor.restart, isRequired: services[index].descriptor.isRequired, startedAt: now)
        } else {
            services[index].supervisor?.restarted(at: now)
            services[index].health.restarts = services[index].supervisor?.total ?? 0
        }
        let service = services[index].service
        let application = application(for: index)
        let (serviceID, runLoopID, input) = (services[index].id, services[index].runLoopID, outlet.input)
        // A run loop outlives the request that started it: it runs in no request's context.
        ServiceContext.withValue(nil) {
            group.addImmediateTask {
                await ServiceSlot.runLoop(of: service, application, until: stop) { ending in
                    input.yield(.runLoopEnded(serviceID: serviceID, runLoopID: runLoopID, ending))
                }
            }
        }
    }

    /// The service gets no further calls; its run loop is cancelled.
    mutating func retire(_ index: Int) {
        services[index].supervisor?.retire()
        services[index].runLoopStop?.finish()
        services[index].runLoopStop = nil
    }

    /// Replaces the service list (after launch, rollback or reload).
    mutating func setServices(_ newServices: [ServiceSlot]) {
        services = newServices
        // A required service the new list has disabled makes the host unhealthy.
        isHealthCheckDue = true
        outlet.publish(status: status)
    }

    /// A service's stall limit: the host's, else three times its hook deadline; never shorter
    /// than that deadline.
    func stallLimit(hookDeadline: Duration) -> Duration {
        max(configuration.stallLimit ?? hookDeadline * 3, hookDeadline)
    }

    /// Finds why the host is unhealthy now, if it is: the first required service (registration
    /// order) stuck in one hook past its stall limit, or that reported itself unhealthy. Logs a
    /// change, and arms a wake for the next stall limit a busy service can reach.
    mutating func checkHealth() {
        isHealthCheckDue = false
        let now = ContinuousClock.now
        var problem: String?
        var nextStall: ContinuousClock.Instant?
        // By index, reading fields in place: a copy of each slot per check costs at 1000 services.
        for index in services.indices where services[index].descriptor.isRequired {
            // A required service the host no longer runs, or whose restarts gave way.
            if case .disabled(let reason) = services[index].health.condition {
                problem = problem ?? "\(services[index].name) is disabled: \(reason)"
                continue
            }
            if let failure = services[index].health.failure { problem = problem ?? "\(services[index].name) \(failure)" }
            if services[index].isBusy, let busy = services[index].busySince {
                let limit = services[index].stallLimit
                if now - busy.instant >= limit {
                    problem = problem ?? "\(services[index].name) stuck in \(busy.hook) for more than \(limit.configText)"
                } else {
                    nextStall = min(nextStall ?? busy.instant + limit, busy.instant + limit)
                }
            }
            if let report = services[index].healthReport { problem = problem ?? "\(services[index].name) reports: \(report)" }
        }
        if let nextStall { armTimer(at: nextStall) }
        guard problem != healthProblem else { return }
        if let problem {
            logger.error("unhealthy: \(problem)", metadata: ["health": "\(problem)"])
        } else {
            logger.notice("healthy again (was: \(healthProblem ?? ""))")
        }
        healthProblem = problem
        do {
            try configuration.launchState?.recordHealthProblem(problem)
        } catch {
            logger.warning("could not keep the health problem for the next launch: \(error)")
        }
    }
}

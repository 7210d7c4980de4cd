import Logging
import ServiceContextModule

/// The services: built from descriptors, their run loops started and retired.
extension HostLoop {
    /// Builds the service (a factory that throws leaves it disabled), with what it kept last:
    /// from the previous run at the launch, the newest bytes when a reload adds it again or
    /// restarts it (its old instance's willTerminate included).
    mutating func makeService(_ descriptor: ServiceDescriptor, instance: (any ApplicationService)? = nil) -> ServiceSlot {
        restorable.takeStaged(from: services)
        var options = launchOptions
        options?.restoredState = restorable.services[descriptor.name]
        if machine.state != .notRunning, machine.state != .launching {
            // Added by a reload or restarted while the host runs: it launches into the host's
            // state, into the background as after an unclean exit there (didEnterBackground alone
            // follows its launch hooks), so its options say so rather than the host's launch's.
            options?.launchesIntoBackground = machine.state == .background
        }
        nextServiceID += 1
        return ServiceSlot(
            id: nextServiceID, descriptor: descriptor, instance: instance, options: options,
            host: configuration, logger: logger, outlet: outlet, bus: bus, sharedState: sharedState
        )
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

    /// Looks at the host's health now (`HealthBook.check`), and arms a wake for the next stall
    /// limit a busy service can reach.
    mutating func checkHealth() {
        isHealthCheckDue = false
        if let nextStall = health.check(services, at: .now, logger: logger, launchState: configuration.launchState) { armTimer(at: nextStall) }
    }
}

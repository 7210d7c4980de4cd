import Logging

/// What one service's hook did.
enum HookResult: Sendable, Equatable {
    /// Returned; launch and update hooks carry their answer, other hooks `true`.
    case returned(Bool)
    /// Threw; the error as text.
    case threw(String)
    /// Still running when its deadline passed; the host moved on.
    case overran(Duration)
    /// Not waited for: an earlier hook of the service still runs; the call is queued behind it.
    case deferred
    /// Not called: the service is disabled.
    case skipped
    /// Still running when terminate came during a launch; the host stopped waiting.
    case abandoned
}

/// One call a service's worker makes.
enum HookCall: Sendable {
    case willFinishLaunching(LaunchOptions)
    case didFinishLaunching(LaunchOptions)
    case event(LifecycleEvent)
    case didUpdateConfiguration(ServiceConfiguration)
    /// Starts the service's `run(_:)` beside its hooks; finishes at the run loop's first suspension.
    case startRunLoop
}

/// A call for a worker, numbered so that its answer finds the wait it belongs to.
struct ServiceJob: Sendable {
    let id: Int
    let call: HookCall
    let application: HostedApplication
}

/// One hosted service as the host's loop keeps it: the instance, its settings, its health, and
/// the mailbox of its worker — a child task of the host that makes its calls one at a time, in
/// order, so a hook that overruns holds up only this service's later calls.
struct ServiceWorker {
    let id: Int
    var descriptor: ServiceDescriptor
    let service: any ApplicationService
    let logger: Logger
    let jobs: AsyncStream<ServiceJob>.Continuation
    var health: ServiceHealth
    /// Jobs sent and not finished: above zero while a hook runs past its deadline.
    var unfinishedJobs = 0
    var hookDeadline: Duration
    var launchDeadline: Duration

    var name: String { descriptor.name }

    mutating func disable(reason: String) {
        health.condition = .disabled(reason: reason)
    }

    /// The worker's body: each job in order, its answer back to the host's loop; the run loop
    /// in a child task. Ends when the host closes the mailbox, cancelling the run loop.
    static func work(
        id: Int,
        service: any ApplicationService,
        jobs: AsyncStream<ServiceJob>,
        answers: AsyncStream<HostInput>.Continuation
    ) async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                let result: HookResult
                if case .startRunLoop = job.call {
                    let application = job.application
                    // Immediate: what `run(_:)` does before it first suspends (subscribing to the
                    // bus) is in place before the host sends the next hook to anyone.
                    group.addImmediateTask {
                        do {
                            try await service.run(application)
                        } catch is CancellationError {
                        } catch {
                            application.logger.error("run loop ended with an error: \(error)")
                        }
                    }
                    result = .returned(true)
                } else {
                    do {
                        result = .returned(try await perform(job.call, on: service, job.application))
                    } catch {
                        result = .threw(String(describing: error))
                    }
                }
                answers.yield(.jobFinished(worker: id, job: job.id, result))
            }
            group.cancelAll()
        }
    }

    private static func perform(_ call: HookCall, on service: any ApplicationService, _ application: HostedApplication) async throws -> Bool {
        switch call {
        case .willFinishLaunching(let options):
            return try await service.application(application, willFinishLaunchingWithOptions: options)
        case .didFinishLaunching(let options):
            return try await service.application(application, didFinishLaunchingWithOptions: options)
        case .didUpdateConfiguration(let configuration):
            return try await service.application(application, didUpdateConfiguration: configuration) == .applied
        case .startRunLoop:
            return true
        case .event(let event):
            switch event {
            case .didBecomeActive: try await service.applicationDidBecomeActive(application)
            case .willResignActive: try await service.applicationWillResignActive(application)
            case .didEnterBackground: try await service.applicationDidEnterBackground(application)
            case .willEnterForeground: try await service.applicationWillEnterForeground(application)
            case .didReceiveMemoryWarning(let level): try await service.applicationDidReceiveMemoryWarning(application, level: level)
            case .protectedDataWillBecomeUnavailable: try await service.applicationProtectedDataWillBecomeUnavailable(application)
            case .protectedDataDidBecomeAvailable: try await service.applicationProtectedDataDidBecomeAvailable(application)
            case .willTerminate: try await service.applicationWillTerminate(application)
            case .willFinishLaunching, .didFinishLaunching, .didUpdateConfiguration:
                preconditionFailure("\(event) carries arguments: the host sends it as its own call")
            }
            return true
        }
    }
}

/// Stands in for a service whose factory threw, so its worker can report why it is disabled.
struct UnbuildableService: ApplicationService {}

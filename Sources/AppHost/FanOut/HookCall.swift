import ServiceContextModule

/// One hook of one service, ready to be made: the instance, the handle, the deadline.
struct HookCall: Sendable {
    /// Which hook, with its arguments.
    enum Hook: Sendable {
        // Boxed: a fan-out copies its calls, and most of them carry only an event.
        indirect case willFinishLaunching(LaunchOptions)
        indirect case didFinishLaunching(LaunchOptions)
        case event(LifecycleEvent)
        indirect case didUpdateConfiguration(ServiceSection)

        var name: String {
            switch self {
            case .willFinishLaunching: LifecycleEvent.willFinishLaunching.hookName
            case .didFinishLaunching: LifecycleEvent.didFinishLaunching.hookName
            case .didUpdateConfiguration: LifecycleEvent.didUpdateConfiguration.hookName
            case .event(let event): event.hookName
            }
        }
    }

    let serviceID: Int
    let service: any ApplicationService
    let hook: Hook
    let application: ApplicationHandle
    let deadline: Duration
    /// The request's context, for a call queued behind a late hook: it runs, and is logged,
    /// with the id of the request that asked for it, not of the one in progress when it runs.
    var queuedContext: ServiceContext?

    /// This call, queued behind a late hook, with the context of the request that asked for it.
    func queued() -> HookCall {
        var call = self
        call.queuedContext = ServiceContext.current
        return call
    }

    /// Calls the hook; `true` unless a launch or update hook answered otherwise.
    func perform() async -> HookResult {
        do {
            return .returned(try await invoke())
        } catch {
            return .threw(String(describing: error))
        }
    }

    private func invoke() async throws -> Bool {
        switch hook {
        case .willFinishLaunching(let options):
            return try await service.application(application, willFinishLaunchingWithOptions: options)
        case .didFinishLaunching(let options):
            return try await service.application(application, didFinishLaunchingWithOptions: options)
        case .didUpdateConfiguration(let configuration):
            return try await service.application(application, didUpdateConfiguration: configuration) == .applied
        case .event(let event):
            switch event {
            case .didBecomeActive: try await service.applicationDidBecomeActive(application)
            case .willResignActive: try await service.applicationWillResignActive(application)
            case .didEnterBackground: try await service.applicationDidEnterBackground(application)
            case .willEnterForeground: try await service.applicationWillEnterForeground(application)
            case .didReceiveMemoryWarning(let level): try await service.applicationDidReceiveMemoryWarning(application, level: level)
            case .significantTimeChange: try await service.applicationSignificantTimeChange(application)
            case .networkDidChange: try await service.applicationNetworkDidChange(application)
            case .powerStateDidChange: try await service.applicationPowerStateDidChange(application)
            case .protectedDataWillBecomeUnavailable: try await service.applicationProtectedDataWillBecomeUnavailable(application)
            case .protectedDataDidBecomeAvailable: try await service.applicationProtectedDataDidBecomeAvailable(application)
            case .willTerminate: try await service.applicationWillTerminate(application)
            case .willFinishLaunching, .didFinishLaunching, .didUpdateConfiguration:
                preconditionFailure("\(event) carries arguments: the host sends it as its own hook")
            }
            return true
        }
    }
}

import AppHost

/// Records every hook call of the service it wraps, then calls it.
struct RecordingService: ApplicationService {
    let wrapped: any ApplicationService
    let calls: TestLog<RecordedHookCall>

    private func record(_ application: ApplicationHandle, _ event: LifecycleEvent) {
        calls.append(RecordedHookCall(application.serviceName, event))
    }

    func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        record(application, .willFinishLaunching)
        return try await wrapped.application(application, willFinishLaunchingWithOptions: options)
    }

    func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        record(application, .didFinishLaunching)
        return try await wrapped.application(application, didFinishLaunchingWithOptions: options)
    }

    func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {
        record(application, .didBecomeActive)
        try await wrapped.applicationDidBecomeActive(application)
    }

    func applicationWillResignActive(_ application: ApplicationHandle) async throws {
        record(application, .willResignActive)
        try await wrapped.applicationWillResignActive(application)
    }

    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        record(application, .didEnterBackground)
        try await wrapped.applicationDidEnterBackground(application)
    }

    func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
        record(application, .willEnterForeground)
        try await wrapped.applicationWillEnterForeground(application)
    }

    func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws {
        record(application, .didReceiveMemoryWarning(level))
        try await wrapped.applicationDidReceiveMemoryWarning(application, level: level)
    }

    func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {
        record(application, .significantTimeChange)
        try await wrapped.applicationSignificantTimeChange(application)
    }

    func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        record(application, .networkDidChange)
        try await wrapped.applicationNetworkDidChange(application)
    }

    func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {
        record(application, .powerStateDidChange)
        try await wrapped.applicationPowerStateDidChange(application)
    }

    func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        record(application, .protectedDataWillBecomeUnavailable)
        try await wrapped.applicationProtectedDataWillBecomeUnavailable(application)
    }

    func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        record(application, .protectedDataDidBecomeAvailable)
        try await wrapped.applicationProtectedDataDidBecomeAvailable(application)
    }

    func applicationWillTerminate(_ application: ApplicationHandle) async throws {
        record(application, .willTerminate)
        try await wrapped.applicationWillTerminate(application)
    }

    func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        record(application, .didUpdateConfiguration)
        return try await wrapped.application(application, didUpdateConfiguration: configuration)
    }

    func run(_ application: ApplicationHandle) async throws {
        try await wrapped.run(application)
    }
}

extension ServiceDescriptor {
    /// The same entry, with every instance it builds wrapped so its hook calls land in `calls`.
    func recording(into calls: TestLog<RecordedHookCall>) -> ServiceDescriptor {
        var descriptor = self
        if var composite {
            composite.children = composite.children.map { $0.recording(into: calls) }
            descriptor.composite = composite
            return descriptor
        }
        let make = makeService
        descriptor.makeService = { RecordingService(wrapped: try make(), calls: calls) }
        return descriptor
    }
}

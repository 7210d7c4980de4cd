import AppHost
import Logging

extension ApplicationHandle {
    /// A handle like the one the host passes to a hook, so a unit test can call a service's
    /// hooks directly: `try await service.applicationDidEnterBackground(.testing())`.
    ///
    /// - Parameters:
    ///   - serviceName: the instance name the service sees.
    ///   - configuration: the service's settings section.
    ///   - state: the host's state when the call is made.
    ///   - launchOptions: how this run was launched; a first launch by default.
    ///   - isSessionLocked: whether protected data is unavailable.
    ///   - stateDirectory: where the service may keep files.
    ///   - serviceCount: how many services the host runs, this one included.
    ///   - logger: the service's logger; one that drops everything by default.
    ///   - bus: the bus the service publishes to and subscribes on.
    ///   - keepRestorableState: receives what the service hands to `keepRestorableState(_:)`.
    ///   - reportHealth: receives what the service reports: the reason of `reportUnhealthy(_:)`,
    ///     nil for `reportHealthy()`.
    public static func testing(
        serviceName: String = "service",
        configuration: ServiceSection = .empty,
        state: ApplicationState = .active,
        launchOptions: LaunchOptions? = .testing(),
        isSessionLocked: Bool = false,
        stateDirectory: String? = nil,
        serviceCount: Int = 1,
        logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
        bus: MessageBus = MessageBus(),
        keepRestorableState: (@Sendable ([UInt8]) -> Void)? = nil,
        reportHealth: (@Sendable (String?) -> Void)? = nil
    ) -> ApplicationHandle {
        ApplicationHandle(
            serviceName: serviceName,
            logger: logger,
            configuration: configuration,
            bus: bus,
            state: state,
            launchOptions: launchOptions,
            isSessionLocked: isSessionLocked,
            stateDirectory: stateDirectory,
            serviceCount: serviceCount,
            keepRestorableState: keepRestorableState,
            reportHealth: reportHealth
        )
    }
}

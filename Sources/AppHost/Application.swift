import Logging
import Synchronization

/// The application handle every hook receives: what a service may know and use, and nothing
/// that would let it reach another service directly.
public struct Application: Sendable {
    /// This service's instance name from the config (`logger`, `analytics`, `nightly-backup`).
    public let serviceName: String
    /// A logger labelled with the service's name.
    public let logger: Logger
    /// This service's own settings section.
    public let configuration: ServiceConfiguration
    /// The bus that services talk through.
    public var bus: MessageBus { context.bus }

    let context: ApplicationContext

    init(serviceName: String, configuration: ServiceConfiguration, context: ApplicationContext, logger: Logger) {
        self.serviceName = serviceName
        self.configuration = configuration
        self.context = context
        var logger = logger
        logger[metadataKey: "service"] = .string(serviceName)
        self.logger = logger
    }

    /// The host's current state, read live.
    public var state: ApplicationState { context.snapshot.state }
    /// How this run was launched; `nil` before launch begins.
    public var launchOptions: LaunchOptions? { context.snapshot.launchOptions }
    /// True while the session is locked (protected data unavailable).
    public var isSessionLocked: Bool { !context.snapshot.isProtectedDataAvailable }
    /// The state directory the host keeps its files in, if it has one.
    public var stateDirectory: String? { context.stateDirectory }
}

/// The state shared by every handle of one host.
final class ApplicationContext: Sendable {
    struct Snapshot: Sendable {
        var state: ApplicationState = .notRunning
        var launchOptions: LaunchOptions?
        var isProtectedDataAvailable = true
    }

    let bus: MessageBus
    let stateDirectory: String?
    private let storage = Mutex(Snapshot())

    init(bus: MessageBus, stateDirectory: String?) {
        self.bus = bus
        self.stateDirectory = stateDirectory
    }

    var snapshot: Snapshot { storage.withLock { $0 } }

    func update(_ body: (inout Snapshot) -> Void) {
        storage.withLock { body(&$0) }
    }
}

/// One entry of the host's service list: which service, under which name, how strict, and how
/// to build it again (for a restart on reload).
public struct ServiceDescriptor: Sendable {
    /// The instance name, unique in the host (`logger`, `nightly-backup`).
    public var name: String
    /// The registry type it was built from; the name when not built from a registry.
    public var type: String
    /// A required service that fails to launch fails the whole launch; an optional one is disabled.
    public var isRequired: Bool
    /// The deadline of this service's lifecycle hooks; nil uses the host's default.
    public var deadline: Duration?
    /// The deadline of this service's launch hooks; nil uses the host's default.
    public var launchDeadline: Duration?
    /// The service's settings section.
    public var configuration: ServiceSection
    /// Builds a fresh instance.
    public var makeService: @Sendable () throws -> any ApplicationService
    /// What the host does when the service's run loop ends on its own; never restart by default.
    public var restart: RestartPolicy = .temporary
    /// The services this entry groups, when it is a composite (`init(name:isRequired:composite:)`);
    /// a composite is never built with `makeService`.
    public var composite: ServiceComposite?

    /// A descriptor that builds its service with `makeService`.
    public init(
        name: String,
        type: String? = nil,
        isRequired: Bool = true,
        deadline: Duration? = nil,
        launchDeadline: Duration? = nil,
        configuration: ServiceSection = .empty,
        makeService: @escaping @Sendable () throws -> any ApplicationService
    ) {
        self.name = name
        self.type = type ?? name
        self.isRequired = isRequired
        self.deadline = deadline
        self.launchDeadline = launchDeadline
        self.configuration = configuration
        self.makeService = makeService
    }

    /// A descriptor around an instance you built yourself.
    public init(
        name: String,
        isRequired: Bool = true,
        deadline: Duration? = nil,
        launchDeadline: Duration? = nil,
        service: any ApplicationService
    ) {
        self.init(name: name, isRequired: isRequired, deadline: deadline, launchDeadline: launchDeadline) { service }
    }

    /// A descriptor for a registry type, built with the registry's factory.
    public init(
        name: String,
        type: String,
        isRequired: Bool,
        deadline: Duration? = nil,
        launchDeadline: Duration? = nil,
        configuration: ServiceSection,
        registry: ServiceRegistry
    ) {
        self.init(name: name, type: type, isRequired: isRequired, deadline: deadline, launchDeadline: launchDeadline, configuration: configuration) {
            try registry.makeService(type: type, configuration: configuration)
        }
    }

    /// Whether a reload changes anything the running instance depends on.
    func differs(from other: ServiceDescriptor) -> Bool {
        // The restart policy is not among them: a reload hands it to the running instance.
        type != other.type || isRequired != other.isRequired || deadline != other.deadline
            || launchDeadline != other.launchDeadline || configuration.values != other.configuration.values
    }
}

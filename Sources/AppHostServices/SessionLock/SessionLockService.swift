import AppHost

/// Placeholder: replaced by the real service.
public struct SessionLockService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "session-lock"
    /// One line for `apphostd services`.
    public static let summary = "(not built yet)"

    /// Builds the service from its settings section.
    public init(configuration: ServiceConfiguration) throws(ConfigurationError) {
        try configuration.requireOnlyKeys([])
    }
}

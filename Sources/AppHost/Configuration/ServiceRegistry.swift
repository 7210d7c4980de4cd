/// Maps a config name (`logger`, `analytics`, ...) to a factory that builds the service from its
/// settings section. Users add their own types next to the built-in ones.
public struct ServiceRegistry: Sendable {
    /// Builds a service from its validated settings; throws `ConfigurationError` for bad settings.
    public typealias Factory = @Sendable (ServiceConfiguration) throws -> any ApplicationService

    /// One registered type.
    public struct Entry: Sendable {
        /// The name the config uses as `type`.
        public let name: String
        /// One line for `apphostd services`.
        public let summary: String
        /// Builds an instance.
        public let factory: Factory
    }

    private var entries: [String: Entry] = [:]

    /// An empty registry.
    public init() {}

    /// Registers `factory` under `name`; a later registration of the same name replaces it.
    public mutating func register(_ name: String, summary: String = "", factory: @escaping Factory) {
        entries[name] = Entry(name: name, summary: summary, factory: factory)
    }

    /// Registers a type that needs no settings: any key in its section is refused.
    public mutating func register(_ name: String, summary: String = "", _ make: @escaping @Sendable () -> any ApplicationService) {
        register(name, summary: summary) { configuration in
            try configuration.requireOnlyKeys([])
            return make()
        }
    }

    /// The registered entries, sorted by name.
    public var entriesByName: [Entry] { entries.values.sorted { $0.name < $1.name } }

    /// Whether `name` is registered.
    public func contains(_ name: String) -> Bool { entries[name] != nil }

    /// Builds a `type` service from `configuration`.
    /// - Throws: `ConfigurationError` for an unknown type (naming the known ones) or bad settings.
    public func makeService(type: String, configuration: ServiceConfiguration, keyPath: String = "type", line: Int? = nil) throws(ConfigurationError) -> any ApplicationService {
        guard let entry = entries[type] else {
            throw ConfigurationError(
                file: configuration.file, line: line, keyPath: keyPath,
                message: "unknown service \"\(type)\"",
                hint: "known services: \(entries.keys.sorted().joined(separator: ", "))"
            )
        }
        do {
            return try entry.factory(configuration)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw configuration.error(nil, "\(error)")
        }
    }
}

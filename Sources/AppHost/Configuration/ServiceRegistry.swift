/// Maps a config name (`logger`, `analytics`, ...) to a factory that builds the service from its
/// settings section. Users add their own types next to the built-in ones.
public struct ServiceRegistry: Sendable {
    /// Builds a service from its validated settings; throws `ConfigurationError` for bad settings.
    public typealias Factory = @Sendable (ServiceSection) throws -> any ApplicationService

    /// One registered type.
    public struct Entry: Sendable {
        /// The name the config uses as `type`.
        public let name: String
        /// One line for `apphostd services`.
        public let summary: String
        /// Builds an instance.
        public let factory: Factory
        /// The keys its settings section may hold, when it was registered with them: then every
        /// unknown key of a section is reported at once, before the factory runs.
        public let settingKeys: [String]?
    }

    private var entries: [String: Entry] = [:]

    /// An empty registry.
    public init() {}

    /// Registers `factory` under `name`; a later registration of the same name replaces it.
    /// With `settingKeys`, a section holding other keys is refused with all of them named
    /// before the factory runs (a factory's own `requireOnlyKeys` stops at the first).
    public mutating func register(_ name: String, summary: String = "", settingKeys: [String]? = nil, factory: @escaping Factory) {
        entries[name] = Entry(name: name, summary: summary, factory: factory, settingKeys: settingKeys)
    }

    /// Registers a type that needs no settings: any key in its section is refused.
    public mutating func register(_ name: String, summary: String = "", _ make: @escaping @Sendable () -> any ApplicationService) {
        register(name, summary: summary, settingKeys: []) { _ in make() }
    }

    /// The registered entries, sorted by name.
    public var entriesByName: [Entry] { entries.values.sorted { $0.name < $1.name } }

    /// Whether `name` is registered.
    public func contains(_ name: String) -> Bool { entries[name] != nil }

    /// Builds a `type` service from `configuration`.
    /// - Throws: `ConfigurationError` for an unknown type (naming the known ones) or bad settings.
    public func makeService(type: String, configuration: ServiceSection, keyPath: String = "type", line: Int? = nil) throws(ConfigurationError) -> any ApplicationService {
        switch build(type: type, configuration: configuration, keyPath: keyPath, line: line) {
        case .success(let service): return service
        case .failure(let invalid): throw invalid.errors[0]
        }
    }

    /// Builds a `type` service, or says everything wrong with its section: every unknown key
    /// (for a type registered with its `settingKeys`), else what the factory threw.
    package func build(type: String, configuration: ServiceSection, keyPath: String = "type", line: Int? = nil) -> Result<any ApplicationService, InvalidConfiguration> {
        guard let entry = entries[type] else {
            return .failure(InvalidConfiguration(ConfigurationError(
                file: configuration.file, line: line, keyPath: keyPath,
                message: "unknown service \"\(type)\"",
                hint: "known services: \(entries.keys.sorted().joined(separator: ", "))"
            )))
        }
        if let keys = entry.settingKeys, let unknown = InvalidConfiguration(configuration.unknownKeys(keys)) {
            return .failure(unknown)
        }
        do {
            return .success(try entry.factory(configuration))
        } catch let error as ConfigurationError {
            return .failure(InvalidConfiguration(error))
        } catch let errors as InvalidConfiguration {
            return .failure(errors)
        } catch {
            return .failure(InvalidConfiguration(configuration.error(nil, "\(error)")))
        }
    }
}

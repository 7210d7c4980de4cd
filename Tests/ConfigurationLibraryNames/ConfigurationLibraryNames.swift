// Stand-ins for every top-level type swift-configuration 1.4.0 exports (its `Configuration`
// module), which a program that reads its settings with it (Hummingbird's
// `ApplicationConfiguration(reader:)`, say) names unqualified beside AppHost. A test that uses
// them all beside `import AppHost` compiles only while AppHost exports none of these names.
// The list was read from the package's sources at 1.4.0 (`public struct|enum|class|actor|
// protocol|typealias` at the top level).

/// The names, for the test to go through.
public let configurationLibraryTypeNames: [String] = [
    "AbsoluteConfigKey",
    "AccessEvent",
    "AccessLogger",
    "AccessReporter",
    "BroadcastingAccessReporter",
    "CommandLineArgumentsProvider",
    "ConfigBytesFromBase64StringDecoder",
    "ConfigBytesFromHexStringDecoder",
    "ConfigBytesFromStringDecoder",
    "ConfigContent",
    "ConfigContextValue",
    "ConfigKey",
    "ConfigProvider",
    "ConfigReader",
    "ConfigSnapshot",
    "ConfigSnapshotReader",
    "ConfigType",
    "ConfigUpdatesAsyncSequence",
    "ConfigValue",
    "DirectoryFilesProvider",
    "EnvironmentVariablesProvider",
    "ExpressibleByConfigInt",
    "ExpressibleByConfigString",
    "FileAccessLogger",
    "FileConfigSnapshot",
    "FileParsingOptions",
    "FileProvider",
    "InMemoryProvider",
    "JSONSnapshot",
    "KeyMappingProvider",
    "LookupResult",
    "MutableInMemoryProvider",
    "PropertyListSnapshot",
    "ReloadingFileProvider",
    "SecretsSpecifier",
    "YAMLSnapshot",
]

/// Stands in for swift-configuration's `AbsoluteConfigKey`.
public struct AbsoluteConfigKey: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `AccessEvent`.
public struct AccessEvent: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `AccessLogger`.
public struct AccessLogger: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `AccessReporter`.
public struct AccessReporter: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `BroadcastingAccessReporter`.
public struct BroadcastingAccessReporter: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `CommandLineArgumentsProvider`.
public struct CommandLineArgumentsProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigBytesFromBase64StringDecoder`.
public struct ConfigBytesFromBase64StringDecoder: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigBytesFromHexStringDecoder`.
public struct ConfigBytesFromHexStringDecoder: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigBytesFromStringDecoder`.
public struct ConfigBytesFromStringDecoder: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigContent`.
public struct ConfigContent: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigContextValue`.
public struct ConfigContextValue: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigKey`.
public struct ConfigKey: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigProvider`.
public struct ConfigProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigReader`.
public struct ConfigReader: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigSnapshot`.
public struct ConfigSnapshot: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigSnapshotReader`.
public struct ConfigSnapshotReader: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigType`.
public struct ConfigType: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigUpdatesAsyncSequence`.
public struct ConfigUpdatesAsyncSequence: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ConfigValue`.
public struct ConfigValue: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `DirectoryFilesProvider`.
public struct DirectoryFilesProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `EnvironmentVariablesProvider`.
public struct EnvironmentVariablesProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ExpressibleByConfigInt`.
public struct ExpressibleByConfigInt: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ExpressibleByConfigString`.
public struct ExpressibleByConfigString: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `FileAccessLogger`.
public struct FileAccessLogger: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `FileConfigSnapshot`.
public struct FileConfigSnapshot: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `FileParsingOptions`.
public struct FileParsingOptions: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `FileProvider`.
public struct FileProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `InMemoryProvider`.
public struct InMemoryProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `JSONSnapshot`.
public struct JSONSnapshot: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `KeyMappingProvider`.
public struct KeyMappingProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `LookupResult`.
public struct LookupResult: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `MutableInMemoryProvider`.
public struct MutableInMemoryProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `PropertyListSnapshot`.
public struct PropertyListSnapshot: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `ReloadingFileProvider`.
public struct ReloadingFileProvider: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `SecretsSpecifier`.
public struct SecretsSpecifier: Sendable {
    public init() {}
}

/// Stands in for swift-configuration's `YAMLSnapshot`.
public struct YAMLSnapshot: Sendable {
    public init() {}
}

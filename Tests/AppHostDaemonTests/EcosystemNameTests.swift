import AppHostDaemon
import AppHostServices
import AppHostSystemd
import ConfigurationLibraryNames
import ServerFrameworkNames
import Testing

/// The daemon's, the edge's and the built-in services' libraries beside a server framework and
/// swift-configuration: their type names stay unambiguous (AppHostTests checks AppHost itself).
struct EcosystemNameTests {
    /// Every swift-configuration type, named unqualified: ambiguous, and so not compiling, if AppHostDaemon, AppHostServices or AppHostSystemd exported one.
    static let configurationLibraryTypes: [Any.Type] = [
        AbsoluteConfigKey.self,
        AccessEvent.self,
        AccessLogger.self,
        AccessReporter.self,
        BroadcastingAccessReporter.self,
        CommandLineArgumentsProvider.self,
        ConfigBytesFromBase64StringDecoder.self,
        ConfigBytesFromHexStringDecoder.self,
        ConfigBytesFromStringDecoder.self,
        ConfigContent.self,
        ConfigContextValue.self,
        ConfigKey.self,
        ConfigProvider.self,
        ConfigReader.self,
        ConfigSnapshot.self,
        ConfigSnapshotReader.self,
        ConfigType.self,
        ConfigUpdatesAsyncSequence.self,
        ConfigValue.self,
        DirectoryFilesProvider.self,
        EnvironmentVariablesProvider.self,
        ExpressibleByConfigInt.self,
        ExpressibleByConfigString.self,
        FileAccessLogger.self,
        FileConfigSnapshot.self,
        FileParsingOptions.self,
        FileProvider.self,
        InMemoryProvider.self,
        JSONSnapshot.self,
        KeyMappingProvider.self,
        LookupResult.self,
        MutableInMemoryProvider.self,
        PropertyListSnapshot.self,
        ReloadingFileProvider.self,
        SecretsSpecifier.self,
        YAMLSnapshot.self,
    ]
    /// Hummingbird's and Vapor's names, the same way.
    static let serverFrameworkTypes: [Any.Type] = [Application.self, Request.self, Response.self, Router.self, Environment.self]

    @Test("swift-configuration's and the server frameworks' type names mean their own types next to the daemon's libraries")
    func namesStayUnambiguous() {
        #expect(Self.configurationLibraryTypes.map { String(reflecting: $0) } == configurationLibraryTypeNames.map { "ConfigurationLibraryNames." + $0 })
        #expect(Self.serverFrameworkTypes.map { String(reflecting: $0) }.allSatisfy { $0.hasPrefix("ServerFrameworkNames.") })
    }
}

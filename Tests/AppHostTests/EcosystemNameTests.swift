import AppHost
import AppHostTestKit
import ConfigurationLibraryNames
import ServerFrameworkNames
import Testing

/// AppHost beside a server framework: the framework's type names stay unambiguous.
struct EcosystemNameTests {
    struct Greeter: ApplicationService {
        func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {}
    }

    @Test("Application, Request, Response, Router and Environment mean the server framework's types next to import AppHost")
    func serverFrameworkNamesStayUnambiguous() throws {
        let application = Application()
        let exchange = (Request(), Response())
        let setup = (Router(), Environment())
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "greeter", service: Greeter())])
        #expect(type(of: application) == ServerFrameworkNames.Application.self)
        #expect(type(of: exchange.0) == ServerFrameworkNames.Request.self)
        #expect(type(of: setup.1) == ServerFrameworkNames.Environment.self)
        #expect(host.serviceNames == ["greeter"])
    }

    /// Every swift-configuration type, named unqualified: ambiguous, and so not compiling, if AppHost or the test kit exported one.
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

    @Test("swift-configuration's type names (ConfigValue, ConfigReader, ConfigKey, …) mean its types next to import AppHost and AppHostTestKit")
    func configurationLibraryNamesStayUnambiguous() {
        let resolved = Self.configurationLibraryTypes.map { String(reflecting: $0) }
        #expect(resolved == configurationLibraryTypeNames.map { "ConfigurationLibraryNames." + $0 })
    }
}

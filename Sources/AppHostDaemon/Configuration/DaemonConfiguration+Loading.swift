import AppHost
import AppHostSupport
import AppHostSystemd

extension DaemonConfiguration {
    /// Loads and validates the config file at `path`, as `apphostd run` and `apphostd check` do.
    ///
    /// - Parameters:
    ///   - path: the YAML file.
    ///   - registry: the service types the file may name; built-ins plus your own.
    ///   - identity: whose default state directory applies when the file names none.
    ///   - environment: where `$STATE_DIRECTORY`, `$XDG_STATE_HOME` and `$HOME` come from.
    /// - Throws: `InvalidConfiguration` with every problem of the file, each with file, line and
    ///   key path; a file that cannot be read or parsed has one.
    public init(
        contentsOf path: String,
        registry: ServiceRegistry,
        identity: DaemonIdentity = .apphostd,
        environment: [String: String] = ProcessEnvironment.current
    ) throws(InvalidConfiguration) {
        let loader = ConfigurationLoader(registry: registry, environment: environment, stateDirectoryName: identity.stateDirectoryName)
        self = try loader.load(path: path)
    }

    /// Loads and validates config `text`, reporting problems against `file`.
    ///
    /// - Throws: `InvalidConfiguration` with every problem, as `init(contentsOf:registry:)`.
    public init(
        text: String,
        file: String = "<config>",
        registry: ServiceRegistry,
        identity: DaemonIdentity = .apphostd,
        environment: [String: String] = ProcessEnvironment.current
    ) throws(InvalidConfiguration) {
        let loader = ConfigurationLoader(registry: registry, environment: environment, stateDirectoryName: identity.stateDirectoryName)
        self = try loader.load(text: text, file: file)
    }

    /// Host settings as the daemon runs them: this file's deadlines, its state directory with the
    /// launch state kept there (launch count, installation id, unclean-exit marker), and the heap
    /// trimmed after every memory warning. `logLevel` and `memoryPressure` are not host settings:
    /// they go to your log handler and to `MemoryPressureEdge`.
    public var hostConfiguration: PluggableApplicationHost.Configuration {
        PluggableApplicationHost.Configuration(
            hookDeadline: hookDeadline,
            launchDeadline: launchDeadline,
            terminateDeadline: terminateDeadline,
            launchState: LaunchStateFiles(directory: stateDirectory),
            stateDirectory: stateDirectory,
            trimHeap: { _ in HeapTrimmer.trim() },
            stallLimit: stallLimit
        )
    }
}

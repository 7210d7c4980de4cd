import AppHost
import AppHostSupport
import AppHostSystemd
import Logging

/// Reads and validates the daemon's YAML config file, all or nothing.
///
/// Every problem comes out as a `ConfigurationError` naming the file, the line, the key path
/// and what would be valid; the loader reads on past each one, so a file's problems come out
/// together as `InvalidConfiguration`, and the daemon can exit 78 at start or keep the old config
/// on reload. A file that cannot be read, is not UTF-8, is not YAML or has no mapping at the top
/// stops at that one problem. Validation builds each service once through its registry factory (factories have no
/// side effects), so a config that loads also launches without settings errors.
package struct ConfigurationLoader: Sendable {
    /// Largest config file accepted, in bytes; anything bigger is refused unread.
    static let sizeLimit = 1 << 20

    /// Keys allowed at the top of the file.
    static let topLevelKeys = ["host", "services"]
    /// Keys allowed under `host:`.
    static let hostKeys = ["hook-deadline", "launch-deadline", "terminate-deadline", "stall-limit", "state-directory", "log-level", "memory-pressure", "metrics", "logind", "logind-session", "time-changes", "network", "power"]
    /// Keys allowed under `host.metrics:`.
    static let metricsKeys = ["textfile", "daemon"]
    /// Keys allowed under `host.memory-pressure:`.
    static let memoryPressureKeys = ["enabled", "warning-stall", "critical-stall", "window"]
    /// Keys allowed in one `services:` entry.
    static let serviceKeys = ["name", "type", "required", "deadline", "launch-deadline", "settings"] + restartKeys + compositeKinds
    /// The keys that make an entry a composite, each with its list of children.
    static let compositeKinds = ["first-of", "one-of", "group"]
    /// Keys allowed in a composite entry.
    static let compositeKeys = ["name", "required", "select"] + compositeKinds
    /// Keys allowed in a one-of's `select:` mapping.
    static let selectKeys = ["environment", "default"]
    /// Longest hook or launch deadline accepted; longer is almost surely a typo (`5h` for `5s`).
    static let longestDeadline: Duration = .seconds(24 * 3600)

    /// The service types the file may name.
    let registry: ServiceRegistry
    /// The environment used to resolve the default state directory.
    let environment: [String: String]
    /// The default state directory's last component (the daemon's name).
    let stateDirectoryName: String

    /// A loader that validates services against `registry`.
    package init(registry: ServiceRegistry, environment: [String: String] = ProcessEnvironment.current, stateDirectoryName: String = DaemonIdentity.apphostd.stateDirectoryName) {
        self.registry = registry
        self.environment = environment
        self.stateDirectoryName = stateDirectoryName
    }

    /// Parses and fully validates `text`, reporting errors against `file`.
    package func load(text: String, file: String) throws(InvalidConfiguration) -> DaemonConfiguration {
        let document = try ConfigurationErrorCollector.alone { () throws(ConfigurationError) in try Self.parse(text: text, file: file) }
        var problems = ConfigurationErrorCollector()
        guard case .table(let topLevel) = document.root else {
            throw InvalidConfiguration(ConfigurationError(
                file: file, line: document.lines[""], keyPath: "",
                message: "expected a mapping with host: and services: at the top, found \(document.root.typeName)",
                hint: "start from the documented config/apphostd.yaml"
            ))
        }
        let root = ServiceSection(topLevel, keyPath: "", file: file, lines: document.lines)
        problems.record(root.unknownKeys(Self.topLevelKeys))

        var configuration = DaemonConfiguration(file: file, stateDirectory: "", services: [])
        readHost(root, into: &configuration, problems: &problems)
        configuration.services = readServices(root, lines: document.lines, problems: &problems)
        if let errors = problems.errors { throw errors }
        return configuration
    }

    /// The YAML document in `text`, or the first reason there is none.
    private static func parse(text: String, file: String) throws(ConfigurationError) -> YAMLDocument {
        let size = text.utf8.count
        if size > Self.sizeLimit {
            throw ConfigurationError(
                file: file, keyPath: "", message: "the file is too large (\(size) bytes; the limit is 1 MiB)",
                hint: "a config file is a few kilobytes; is this the right file?"
            )
        }
        if text.allSatisfy(\.isWhitespace) {
            throw ConfigurationError(
                file: file, keyPath: "", message: text.isEmpty ? "the file is empty" : "the file has no settings, only whitespace",
                hint: "start from the documented config/apphostd.yaml"
            )
        }
        return try YAMLDocument.parse(text, file: file)
    }
}

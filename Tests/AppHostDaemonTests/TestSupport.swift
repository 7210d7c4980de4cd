import AppHost
import Foundation
import Synchronization
@testable import AppHostDaemon

/// Paths of the package, found from this file so tests run from any working directory.
enum PackagePaths {
    /// The package root (the folder holding Package.swift).
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The bad-config corpus.
    static let badConfigs = root + "/Tests/AppHostDaemonTests/BadConfigs"
}

/// A service with no behaviour; the tests only care how it is configured.
struct NoopService: ApplicationService {}

/// A test service with two typed settings, to prove the loader surfaces factory errors.
struct CheckedService: ApplicationService {
    let level: String
    let count: Int

    init(configuration: ServiceSection) throws(ConfigurationError) {
        try configuration.requireOnlyKeys(["level", "count"])
        level = try configuration.choice("level", of: ["low", "high"]) ?? "low"
        count = try configuration.int("count", in: 1...10) ?? 1
    }
}

/// Counts factory calls, so a test can see that loading builds each service exactly once.
final class FactoryCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// A registry with the built-in names as no-op services plus `checked`, independent of the
/// real services' settings.
func makeTestRegistry(counter: FactoryCounter? = nil) -> ServiceRegistry {
    var registry = ServiceRegistry()
    for name in ["logger", "analytics", "session-lock", "notification"] {
        registry.register(name, summary: "test \(name)") { configuration in
            counter?.increment()
            try configuration.requireOnlyKeys([])
            return NoopService()
        }
    }
    registry.register("checked", summary: "test service with settings") { configuration in
        counter?.increment()
        return try CheckedService(configuration: configuration)
    }
    return registry
}

/// The first problem `body` reports, or nil when it succeeds.
func configurationError(_ body: () throws(InvalidConfiguration) -> DaemonConfiguration) -> ConfigurationError? {
    configurationErrors(body)?.first
}

/// Every problem `body` reports, or nil when it succeeds.
func configurationErrors(_ body: () throws(InvalidConfiguration) -> DaemonConfiguration) -> InvalidConfiguration? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

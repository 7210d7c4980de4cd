import Foundation
import Synchronization

/// The daemon built as deploy/INSTALL.md builds it: `scripts/build-release.sh`.
///
/// `InstallBuildTests` and `SystemManagerTests` share the build: one scratch path (where
/// Benchmarks/process/run.sh builds it too, so a second run is incremental) and, within one test
/// run, one build.
enum ReleaseBuild {
    static let repository = IntegrationSuites.GettingStartedPackageTests.repository
    static let scratch = repository + "/.build-release"
    /// The binary the build leaves (not stripped; `install -s` strips it on the way).
    static let binary = scratch + "/release/apphostd"

    private static let build = Mutex<Task<CommandResult, any Error>?>(nil)

    /// Builds the release binary once per test run and returns its path; throws with the build's
    /// output when it fails.
    static func apphostd() async throws -> String {
        let task = build.withLock { task in
            if let task { return task }
            let started = Task {
                return try await ProcessRunner.run(
                    ["/bin/bash", repository + "/scripts/build-release.sh", "--scratch-path", scratch],
                    environment: ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""]),
                    timeout: .seconds(1200)
                )
            }
            task = started
            return started
        }
        let result = try await task.value
        guard result.succeeded else { throw HarnessError("the release build failed: \(result)") }
        return binary
    }
}

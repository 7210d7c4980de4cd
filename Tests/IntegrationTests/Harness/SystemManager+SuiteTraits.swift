import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Whether a suite can boot a system here, and the suite traits that boot one or skip.
extension SystemManager {
    /// Why the system-manager tests cannot run here, or nil. Printed once when first asked.
    static let problem: String? = {
        let problem = findProblem()
        if let problem { print("IntegrationTests: system-manager tests skipped: \(problem)") }
        return problem
    }()

    private static func findProblem() -> String? {
        #if os(Linux)
        if ProcessInfo.processInfo.environment["APPHOSTD_SKIP_INTEGRATION"] == "1" { return "APPHOSTD_SKIP_INTEGRATION=1" }
        if geteuid() != 0 { return "not root (uid \(geteuid())): systemd-nspawn and debootstrap need root" }
        if ProcessRunner.resolve("systemd-nspawn") == nil { return "no systemd-nspawn (apt-get install systemd-container)" }
        for tool in ["nsenter", "cp", "bash", "install", "strip", "useradd"] where ProcessRunner.resolve(tool) == nil {
            return "\(tool) not found in \(ProcessRunner.searchPath.joined(separator: ":"))"
        }
        if IntegrationEnvironment.swiftDriver == nil { return "no swift driver on PATH to build the release binary" }
        return DebianRoot.problem()
        #else
        return "needs Linux with systemd-nspawn"
        #endif
    }
}

/// Boots one `SystemManager` around a whole suite (once, not per test) and hands it to its tests
/// as `SystemManager.current`.
struct BootedSystemTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let clock = ContinuousClock()
        let began = clock.now
        try await SystemManager.with { system in
            try await SystemManager.$current.withValue(system) { try await function() }
        }
        print("IntegrationTests: \(test.name): booted system, tests and power-off took \(seconds(clock.now - began))")
    }
}

extension Trait where Self == BootedSystemTrait {
    /// Boots a system manager once for the suite (see `SystemManager`).
    static var bootedSystem: Self { Self() }
}

extension Trait where Self == ConditionTrait {
    /// For a suite that boots a system manager: skipped, with the reason, where it cannot.
    static var needsSystemManager: Self {
        .disabled(if: SystemManager.problem != nil, Comment(rawValue: SystemManager.problem ?? ""))
    }
}

import Foundation

extension IntegrationEnvironment {
    /// Why apphostd cannot be run directly here (no systemd needed), or nil. Printed once.
    static let directDaemonProblem: String? = {
        #if os(Linux)
        if ProcessInfo.processInfo.environment["APPHOSTD_SKIP_INTEGRATION"] == "1" {
            print("IntegrationTests: direct apphostd scenarios skipped: APPHOSTD_SKIP_INTEGRATION=1")
            return "APPHOSTD_SKIP_INTEGRATION=1"
        }
        if apphostdBinary == nil {
            let explicit = ProcessInfo.processInfo.environment["APPHOSTD_BINARY"] ?? ""
            let problem = explicit.isEmpty
                ? "no apphostd binary: set APPHOSTD_BINARY or build it (swift build --product apphostd) next to the test bundle (searched from \(executableDirectory ?? "?"))"
                : "APPHOSTD_BINARY=\(explicit) is not an executable file"
            print("IntegrationTests: direct apphostd scenarios skipped: \(problem)")
            return problem
        }
        return nil
        #else
        print("IntegrationTests: direct apphostd scenarios skipped: needs Linux")
        return "needs Linux"
        #endif
    }()

    /// Whether apphostd can be run directly with a recorded notify socket.
    static var canRunDaemonDirectly: Bool { directDaemonProblem == nil }
}

import Foundation

/// What the integration tests need from the machine, checked once, with the reason when absent.
///
/// The tests need root (to unshare a mount namespace, mount tmpfs and create cgroups), `unshare`
/// and `nsenter`, systemd's journald and user manager, `systemctl` and `journalctl`, and the built
/// `apphostd` binary. When something is missing the suites are disabled and the reason is printed.
enum IntegrationEnvironment {
    /// The sandbox script, in the test target's Support/ folder.
    static let sandboxScript: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/sandbox.sh").path

    /// Why the sandbox cannot run here, or nil when it can. Printed once when first asked.
    static let sandboxProblem: String? = {
        let problem = findSandboxProblem()
        if let problem { print("IntegrationTests: systemd sandbox tests skipped: \(problem)") }
        return problem
    }()

    /// Why the daemon scenarios cannot run here (sandbox problems included), or nil.
    static let daemonProblem: String? = {
        if let sandboxProblem { return sandboxProblem }
        if let explicit = ProcessInfo.processInfo.environment["APPHOSTD_BINARY"], !explicit.isEmpty, apphostdBinary == nil {
            let problem = "APPHOSTD_BINARY=\(explicit) is not an executable file"
            print("IntegrationTests: apphostd scenarios skipped: \(problem)")
            return problem
        }
        if apphostdBinary == nil {
            let problem = "no apphostd binary: set APPHOSTD_BINARY or build it (swift build --product apphostd) next to the test bundle (searched from \(executableDirectory ?? "?"))"
            print("IntegrationTests: apphostd scenarios skipped: \(problem)")
            return problem
        }
        return nil
    }()

    /// Whether the sandbox self-tests can run.
    static var canRunSandbox: Bool { sandboxProblem == nil }

    /// Whether the apphostd scenarios can run.
    static var canRunDaemon: Bool { daemonProblem == nil }

    private static func findSandboxProblem() -> String? {
        #if os(Linux)
        if geteuid() != 0 { return "not root (uid \(geteuid())): needs root to unshare a mount namespace and mount tmpfs" }
        for tool in ["unshare", "nsenter", "systemctl", "journalctl", "bash"] where ProcessRunner.resolve(tool) == nil {
            return "\(tool) not found in \(ProcessRunner.searchPath.joined(separator: ":"))"
        }
        for program in ["/lib/systemd/systemd", "/lib/systemd/systemd-journald"]
        where !FileManager.default.isExecutableFile(atPath: program) {
            return "\(program) missing (install systemd)"
        }
        if !FileManager.default.isReadableFile(atPath: sandboxScript) { return "sandbox script missing at \(sandboxScript)" }
        if ProcessInfo.processInfo.environment["APPHOSTD_SKIP_INTEGRATION"] == "1" { return "APPHOSTD_SKIP_INTEGRATION=1" }
        return nil
        #else
        return "needs Linux with systemd"
        #endif
    }

    /// The directory of the running test executable (the build products directory).
    static let executableDirectory: String? = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
        guard let exe else { return nil }
        return URL(fileURLWithPath: exe).resolvingSymlinksInPath().deletingLastPathComponent().path
    }()

    /// The `apphostd` executable: `$APPHOSTD_BINARY`, else the nearest `apphostd` file walking up
    /// from the test executable's directory (SwiftPM puts both in `<scratch>/<triple>/debug/`).
    static let apphostdBinary: String? = {
        if let explicit = ProcessInfo.processInfo.environment["APPHOSTD_BINARY"], !explicit.isEmpty {
            return FileManager.default.isExecutableFile(atPath: explicit) ? explicit : nil
        }
        var directories: [URL] = []
        if let executableDirectory { directories.append(URL(fileURLWithPath: executableDirectory)) }
        if let argv0 = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: argv0).deletingLastPathComponent())
        }
        for start in directories {
            var directory = start.standardizedFileURL
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent("apphostd").path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate) {
                    return candidate
                }
                let parent = directory.deletingLastPathComponent()
                if parent.path == directory.path { break }
                directory = parent
            }
        }
        return nil
    }()
}

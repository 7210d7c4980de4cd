import AppHostTestSupport
import Foundation

/// Runs child processes without blocking a cooperative thread, capturing their output in files.
///
/// Output goes to temporary files rather than pipes so a chatty child can never stall on a full
/// pipe while we wait for it, and so nothing of ours keeps a pipe open after the child exits.
enum ProcessRunner {
    /// Directories searched for a bare program name.
    static let searchPath = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]

    /// The absolute path of `program`, looked up in `searchPath` unless it contains a slash.
    static func resolve(_ program: String) -> String? {
        if program.contains("/") { return FileManager.default.isExecutableFile(atPath: program) ? program : nil }
        for directory in searchPath {
            let candidate = directory + "/" + program
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The environment children get: a fixed PATH, no pager, no colours, plus `extra`.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "PATH": searchPath.joined(separator: ":"),
            "LANG": "C.UTF-8",
            "SYSTEMD_PAGER": "",
            "PAGER": "cat",
            "SYSTEMD_COLORS": "0",
            "SYSTEMD_LOG_COLOR": "0",
        ]
        if let home = ProcessInfo.processInfo.environment["HOME"] { environment["HOME"] = home }
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Runs `argv` to completion and returns its status and output.
    /// - Parameters:
    ///   - environment: the complete environment (see `environment(_:)`).
    ///   - timeout: after this the child gets SIGKILL and the result says so in stderr.
    static func run(_ argv: [String], environment: [String: String] = environment(), timeout: Duration = .seconds(60)) async throws -> CommandResult {
        guard let program = argv.first, let executable = resolve(program) else {
            throw HarnessError("cannot find program \(argv.first ?? "<empty argv>")")
        }
        let scratch = URL(fileURLWithPath: try makeTemporaryDirectory("apphostd-it-run"))
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(argv.dropFirst())
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle
        let timedOut = Flag()
        var timer: Task<Void, Never>?
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: HarnessError("cannot run \(argv.joined(separator: " ")): \(error)"))
                return
            }
            let pid = process.processIdentifier
            // Why a detached timer: the continuation is resumed only by the child's exit, so the
            // timeout must come from elsewhere; it only signals this child and is cancelled below.
            timer = Task.detached {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled, process.isRunning {
                    timedOut.set()
                    kill(pid, SIGKILL)
                }
            }
        }
        timer?.cancel()
        try? outHandle.close()
        try? errHandle.close()
        let stdout = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        var stderr = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        if timedOut.isSet { stderr += "\n[killed after \(timeout)]" }
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return CommandResult(argv: argv, status: status, stdout: stdout, stderr: stderr)
    }
}

import AppHostTestSupport
import Foundation
import Synchronization

/// A private systemd for one test: journald and a user manager (with its session bus) in a private
/// mount namespace and cgroup subtree, started by `Support/sandbox.sh`.
///
/// Commands run inside the namespace through `nsenter` with the sandbox's `XDG_RUNTIME_DIR` and bus,
/// so `systemctl --user` talks to this manager and `journalctl` reads this journald's files only.
/// Use `SystemdSandbox.with { sandbox in ... }`, which always tears it down.
final class SystemdSandbox: Sendable {
    /// The sandbox's state directory (XDG dirs, logs, and room for the test's own files).
    let directory: String
    /// The pid of the sandbox script, the namespace's anchor for `nsenter`.
    let pid: Int32
    /// The `KEY=VALUE` lines of `ready`.
    let values: [String: String]
    /// How long setup took, from spawn to `ready`.
    let startupTime: Duration

    private let process: Mutex<Process?>
    private let stdinPipe: Pipe

    /// Where user units go (`$XDG_CONFIG_HOME/systemd/user`).
    var unitDirectory: String { values["unit_dir"] ?? directory + "/config/systemd/user" }
    /// The private `XDG_RUNTIME_DIR`.
    var runtimeDirectory: String { values["XDG_RUNTIME_DIR"] ?? directory + "/run" }
    /// The user bus address.
    var busAddress: String { values["DBUS_SESSION_BUS_ADDRESS"] ?? "unix:path=\(runtimeDirectory)/bus" }

    private init(directory: String, process: Process, stdinPipe: Pipe, values: [String: String], startupTime: Duration) {
        self.directory = directory
        self.pid = Int32(values["pid"] ?? "") ?? process.processIdentifier
        self.values = values
        self.startupTime = startupTime
        self.process = Mutex(process)
        self.stdinPipe = stdinPipe
    }

    /// Starts a sandbox, runs `body`, and stops the sandbox whatever happens.
    static func with<R: Sendable>(_ body: (SystemdSandbox) async throws -> R) async throws -> R {
        let sandbox = try await start()
        do {
            let result = try await body(sandbox)
            await sandbox.stop()
            return result
        } catch {
            await sandbox.stop(keep: true)
            throw error
        }
    }

    /// Spawns the sandbox and waits (at most 30 s) until it is ready.
    static func start() async throws -> SystemdSandbox {
        let directory = try makeTemporaryDirectory("apphostd-it")
        let logURL = URL(fileURLWithPath: directory + "/sandbox.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }

        let clock = ContinuousClock()
        let began = clock.now
        let stdinPipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessRunner.resolve("unshare") ?? "/usr/bin/unshare")
        process.arguments = ["--mount", "--propagation", "private", "--", "/bin/bash", IntegrationEnvironment.sandboxScript, directory]
        process.environment = ProcessRunner.environment()
        process.standardInput = stdinPipe
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // Our copy of the read end is not needed; the child has its own.
        try? stdinPipe.fileHandleForReading.close()

        let readyPath = directory + "/ready"
        let failedPath = directory + "/failed"
        let settled = await eventually(timeout: .seconds(30), every: .milliseconds(20)) {
            FileManager.default.fileExists(atPath: readyPath) || FileManager.default.fileExists(atPath: failedPath) || !process.isRunning
        }
        guard settled, let ready = try? String(contentsOfFile: readyPath, encoding: .utf8) else {
            try? stdinPipe.fileHandleForWriting.close()
            _ = await eventually(timeout: .seconds(30), every: .milliseconds(50)) { !process.isRunning }
            let sandboxLog = (try? String(contentsOfFile: logURL.path, encoding: .utf8)) ?? ""
            let failed = (try? String(contentsOfFile: failedPath, encoding: .utf8)) ?? (settled ? "sandbox exited" : "not ready within 30s")
            throw HarnessError("systemd sandbox did not start: \(failed.trimmingCharacters(in: .whitespacesAndNewlines))\nsandbox.log (\(directory)):\n\(sandboxLog.suffix(3000))")
        }
        var values: [String: String] = [:]
        for line in ready.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return SystemdSandbox(directory: directory, process: process, stdinPipe: stdinPipe, values: values, startupTime: clock.now - began)
    }

    /// Stops everything the sandbox started (closing its stdin; the script cleans up) and waits for
    /// it. Removes the directory unless `keep` or `$APPHOSTD_IT_KEEP` is set.
    func stop(keep: Bool = false) async {
        guard let process = self.process.withLock({ value -> Process? in let taken = value; value = nil; return taken }) else { return }
        _ = FileManager.default.createFile(atPath: directory + "/stop", contents: nil)
        try? stdinPipe.fileHandleForWriting.close()
        if await !eventually(timeout: .seconds(40), every: .milliseconds(50), { !process.isRunning }) {
            print("IntegrationTests: sandbox \(pid) did not stop within 40s; sending SIGKILL")
            kill(process.processIdentifier, SIGKILL)
        }
        if keep || ProcessInfo.processInfo.environment["APPHOSTD_IT_KEEP"] != nil {
            print("IntegrationTests: sandbox files kept in \(directory)")
        } else {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Runs `argv` inside the sandbox's mount namespace with its runtime dir and bus.
    func run(_ argv: [String], environment extra: [String: String] = [:], timeout: Duration = .seconds(60)) async throws -> CommandResult {
        var environment = ProcessRunner.environment([
            "XDG_RUNTIME_DIR": runtimeDirectory,
            "DBUS_SESSION_BUS_ADDRESS": busAddress,
        ])
        for key in ["XDG_CONFIG_HOME", "XDG_STATE_HOME"] { environment[key] = values[key] }
        environment.merge(extra) { _, new in new }
        let result = try await ProcessRunner.run(
            ["nsenter", "--mount=/proc/\(pid)/ns/mnt", "--"] + argv, environment: environment, timeout: timeout)
        return CommandResult(argv: argv, status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// `systemctl --user ARGS...`.
    @discardableResult
    func systemctl(_ arguments: String..., timeout: Duration = .seconds(60)) async throws -> CommandResult {
        try await run(["systemctl", "--user", "--no-pager"] + arguments, timeout: timeout)
    }

    /// Writes a unit file into the user unit directory and reloads the manager.
    func installUnit(name: String, text: String) async throws {
        try text.write(toFile: unitDirectory + "/" + name, atomically: true, encoding: .utf8)
        let reload = try await systemctl("daemon-reload")
        guard reload.succeeded else { throw HarnessError("daemon-reload failed: \(reload)") }
    }

    /// Properties of a unit from `systemctl --user show` (default: the ones tests look at).
    func status(of unit: String, properties: [String] = SystemdSandbox.statusProperties) async throws -> [String: String] {
        let result = try await run(["systemctl", "--user", "show", unit] + properties.flatMap { ["-p", $0] })
        guard result.succeeded else { throw HarnessError("systemctl show failed: \(result)") }
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }

    /// The properties `status(of:)` reads by default.
    static let statusProperties = ["ActiveState", "SubState", "Result", "StatusText", "MainPID", "ExecMainStatus", "ExecMainCode", "StatusErrno"]
}

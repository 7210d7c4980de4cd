import AppHostTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// systemd 252 as PID 1 of a minimal Debian 12 system, with apphostd installed as operators
/// install it (`deploy/install.sh BINARY ROOT`), booted in a container by `systemd-nspawn`.
///
/// Unlike `SystemdSandbox` (a user manager), this applies the shipped unit in full: `User=` (and its bus policy),
/// `LoadCredential=`, `StateDirectory=`, the seccomp filter and the namespaces. Each boot gets a
/// fresh copy of the cached root (`DebianRoot`), so tests start from a clean system.
///
/// Commands run inside through `nsenter -t <PID 1> -a` (all of the container's namespaces, its
/// root included), so `systemctl` talks to the container's manager and `journalctl` reads its
/// journal. Use `SystemManager.with { system in ... }` or the `.bootedSystem` suite trait, which
/// always power it off.
///
/// Every boot is also made safe to suspend and ready for logind (SystemManager+Power.swift):
/// `/sys/power/state` is a file of the boot directory, systemd-suspend.service runs `/bin/true`,
/// `InhibitDelayMaxSec=2`, and users `tester` and `tester2` exist for login sessions.
final class SystemManager: Sendable {
    /// The directory of this boot: `root/` (the container's root), `nspawn.log`, `install.log`.
    let directory: String
    /// The container's root directory, seen from the host.
    var root: String { directory + "/root" }
    /// The machine name given to nspawn (unique per boot).
    let machine: String
    /// The container's PID 1 (systemd), as the host sees it.
    let pid1: Int32
    /// What the harness spent, step by step, for the suite's report.
    let timings: [(step: String, duration: Duration)]
    /// The booted systemd's version (`systemctl --version`: 252 on bookworm, 257 on trixie).
    let systemdVersion: Int

    private let nspawn: Mutex<Process?>

    private init(directory: String, machine: String, nspawn: Process, pid1: Int32, timings: [(step: String, duration: Duration)], systemdVersion: Int) {
        self.directory = directory
        self.machine = machine
        self.nspawn = Mutex(nspawn)
        self.pid1 = pid1
        self.timings = timings
        self.systemdVersion = systemdVersion
    }

    /// The booted system of the enclosing `.bootedSystem` suite.
    @TaskLocal static var current: SystemManager?

    // MARK: Boot and power off

    /// Boots a system, runs `body`, and powers it off whatever happens.
    static func with<R: Sendable>(installsWithScript: Bool = true, _ body: (SystemManager) async throws -> R) async throws -> R {
        let system = try await boot(installsWithScript: installsWithScript)
        do {
            let result = try await body(system)
            await system.powerOff()
            return result
        } catch {
            await system.powerOff()
            throw error
        }
    }

    /// Prepares the Debian root (cached), builds the release binary (shared with
    /// `InstallBuildTests`), copies the root, installs with `deploy/install.sh BINARY ROOT`, boots
    /// it and waits (bounded) until `systemctl is-system-running --wait` answers inside.
    /// `installsWithScript` false: nothing of apphostd's is installed (the Debian package's tests
    /// install it themselves).
    static func boot(installsWithScript: Bool = true) async throws -> SystemManager {
        let clock = ContinuousClock()
        var timings: [(step: String, duration: Duration)] = []
        func timed<T>(_ step: String, _ work: () async throws -> T) async throws -> T {
            let began = clock.now
            let value = try await work()
            timings.append((step, clock.now - began))
            return value
        }

        let cached = try await timed(DebianRoot.isCached ? "Debian root (cached)" : "Debian root (debootstrap)") {
            try await DebianRoot.prepare { print("IntegrationTests: \($0)") }
        }
        let binary = try await timed("release build") { try await ReleaseBuild.apphostd() }

        let directory = try makeTemporaryDirectory("apphostd-pid1")
        let root = directory + "/root"
        do {
            let copy = try await timed("copy of the root") {
                try await ProcessRunner.run(["cp", "-a", "--reflink=auto", cached, root], timeout: .seconds(300))
            }
            guard copy.succeeded else { throw HarnessError("cannot copy the Debian root: \(copy)") }

            if installsWithScript {
                let install = try await timed("deploy/install.sh") {
                    try await ProcessRunner.run(["bash", ReleaseBuild.repository + "/deploy/install.sh", binary, root], timeout: .seconds(120))
                }
                let installLog = "\(install)\n"
                try? installLog.write(toFile: directory + "/install.log", atomically: false, encoding: .utf8)
                guard install.succeeded else { throw HarnessError("deploy/install.sh failed: \(install)") }
            }

            let machine = "apphostd-it-" + UUID().uuidString.prefix(8).lowercased()
            try await timed("logind and power setup") { try await preparePowerAndLogind(directory: directory, machine: machine) }
            let booting = clock.now
            let (nspawn, pid1) = try await start(root: root, machine: machine, directory: directory)
            do {
                try await waitUntilBooted(pid1: pid1, nspawn: nspawn, directory: directory)
            } catch {
                await stop(nspawn, pid1: pid1, machine: machine)
                throw error
            }
            timings.append(("boot to is-system-running", clock.now - booting))
            // "systemd 257 (257.9-1~deb13u1)"
            let version = try await run(["systemctl", "--version"], in: pid1)
            let systemdVersion = version.stdout.split(separator: "\n").first?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            let system = SystemManager(directory: directory, machine: machine, nspawn: nspawn, pid1: pid1, timings: timings, systemdVersion: systemdVersion)
            print("IntegrationTests: system manager booted \(DebianRoot.release.name), systemd \(systemdVersion): " + timings.map { "\($0.step) \(seconds($0.duration))" }.joined(separator: ", "))
            return system
        } catch {
            if ProcessInfo.processInfo.environment["APPHOSTD_IT_KEEP"] == nil { try? await DebianRoot.remove(directory) }
            throw error
        }
    }

    /// Starts nspawn and finds the container's PID 1 among its children (nspawn is the
    /// subreaper of the container's init, which is the child whose innermost pid is 1).
    private static func start(root: String, machine: String, directory: String) async throws -> (Process, Int32) {
        let logPath = directory + "/nspawn.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? log.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessRunner.resolve("systemd-nspawn") ?? "/usr/bin/systemd-nspawn")
        // --private-network: the daemon needs none, and nspawn keeps CAP_NET_ADMIN only with it,
        // which the container's systemd needs to set up PrivateNetwork='s loopback device.
        // --bind= over /sys/power/state: logind sees a writable file that offers sleep, and a
        // systemd-sleep that ran anyway could write only into that file (SystemManager+Power).
        process.arguments = [
            "--directory=\(root)", "--boot", "--register=no", "--keep-unit", "--console=passive",
            "--private-network", "--machine=\(machine)", "--bind=\(powerStateFile(directory: directory)):/sys/power/state",
        ]
        process.environment = ProcessRunner.environment(DebianRoot.release.nspawnEnvironment)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let leader = process.processIdentifier

        let found = Mutex<Int32?>(nil)
        let settled = await eventually(timeout: .seconds(30), every: .milliseconds(20)) {
            if let pid = containerInit(of: leader) { found.withLock { $0 = pid }; return true }
            return !process.isRunning
        }
        guard settled, let pid1 = found.withLock({ $0 }) else {
            if process.isRunning { process.terminate() }
            _ = await eventually(timeout: .seconds(10), every: .milliseconds(50)) { !process.isRunning }
            if process.isRunning { kill(leader, SIGKILL) }
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw HarnessError("systemd-nspawn did not start a container init \(settled ? "(it exited)" : "within 30s"):\n\(text.suffix(3000))")
        }
        return (process, pid1)
    }

    /// The child of `leader` that is PID 1 of its own pid namespace.
    private static func containerInit(of leader: Int32) -> Int32? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(leader)/task")) ?? []
        for task in tasks {
            let children = (try? String(contentsOfFile: "/proc/\(leader)/task/\(task)/children", encoding: .utf8)) ?? ""
            for child in children.split(separator: " ").compactMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                let status = (try? String(contentsOfFile: "/proc/\(child)/status", encoding: .utf8)) ?? ""
                guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") }) else { continue }
                let pids = line.dropFirst("NSpid:".count).split(whereSeparator: { $0 == " " || $0 == "\t" })
                if pids.count > 1, pids.last == "1" { return child }
            }
        }
        return nil
    }

    /// Waits until the container's manager has finished booting (`running` or `degraded`). Its
    /// bus socket appears a moment after PID 1 starts, so the first calls may fail: retried.
    private static func waitUntilBooted(pid1: Int32, nspawn: Process, directory: String) async throws {
        var last: CommandResult?
        let booted = try await eventually(timeout: .seconds(90), every: .milliseconds(100)) {
            guard nspawn.isRunning else { return true }
            let answer = try await run(["systemctl", "is-system-running", "--wait"], in: pid1, timeout: .seconds(30))
            last = answer
            return ["running", "degraded"].contains(answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard booted, nspawn.isRunning else {
            throw HarnessError("the container did not boot: \(last.map { "\($0)" } ?? "no answer")\n\(nspawnLog(directory: directory))")
        }
        if last?.stdout.contains("degraded") == true {
            let failed = try? await run(["systemctl", "--no-pager", "--failed", "--no-legend"], in: pid1)
            print("IntegrationTests: the container booted degraded; failed units:\n\(failed?.stdout ?? "?")")
        }
    }

    /// Whether the container still runs (nspawn has not exited): false after `powerOff()`, and
    /// after `powerOffInside()` or anything else that ended the container.
    var isRunning: Bool {
        nspawn.withLock { $0?.isRunning ?? false }
    }

    /// Waits (bounded) until nspawn has exited; whether it did.
    func waitUntilStopped(timeout: Duration) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(50)) { !isRunning }
    }

    /// Powers the container off (nspawn turns SIGTERM into an orderly shutdown of its init),
    /// kills it if that takes more than 30 s, and removes its directory unless `$APPHOSTD_IT_KEEP`.
    /// After `powerOffInside()` the container has already stopped: this only removes the directory.
    func powerOff() async {
        guard let process = nspawn.withLock({ value -> Process? in let taken = value; value = nil; return taken }) else { return }
        await Self.stop(process, pid1: pid1, machine: machine)
        if ProcessInfo.processInfo.environment["APPHOSTD_IT_KEEP"] != nil {
            print("IntegrationTests: container root kept in \(root)")
        } else {
            try? await DebianRoot.remove(directory)
        }
    }

    private static func stop(_ process: Process, pid1: Int32, machine: String) async {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        if await !eventually(timeout: .seconds(30), every: .milliseconds(50), { !process.isRunning }) {
            print("IntegrationTests: container \(machine) did not power off within 30s; killing it")
            kill(pid1, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
            _ = await eventually(timeout: .seconds(10), every: .milliseconds(50)) { !process.isRunning }
        }
    }

    /// The end of nspawn's console output, for failure messages.
    static func nspawnLog(directory: String, count: Int = 3000) -> String {
        let text = (try? String(contentsOfFile: directory + "/nspawn.log", encoding: .utf8)) ?? "(no nspawn.log)"
        return "nspawn.log:\n" + text.suffix(count)
    }

    // MARK: Driving it

    /// Runs `argv` inside the container (all its namespaces and its root).
    ///
    /// Throws once the container has stopped: its PID 1's number may by then belong to a process
    /// of the host, and `nsenter` would run `argv` there.
    func run(_ argv: [String], timeout: Duration = .seconds(60)) async throws -> CommandResult {
        guard isRunning else { throw HarnessError("the container \(machine) is not running (powered off); cannot run \(argv.joined(separator: " "))") }
        return try await Self.run(argv, in: pid1, timeout: timeout)
    }

    private static func run(_ argv: [String], in pid1: Int32, timeout: Duration = .seconds(60)) async throws -> CommandResult {
        let result = try await ProcessRunner.run(["nsenter", "--target=\(pid1)", "--all", "--"] + argv, timeout: timeout)
        return CommandResult(argv: argv, status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// `systemctl ARGS...` inside.
    @discardableResult
    func systemctl(_ arguments: String..., timeout: Duration = .seconds(60)) async throws -> CommandResult {
        try await run(["systemctl", "--no-pager"] + arguments, timeout: timeout)
    }

    /// Properties of a unit (`systemctl show`).
    func show(_ unit: String, _ properties: [String] = SystemdSandbox.statusProperties) async throws -> [String: String] {
        let result = try await run(["systemctl", "show", unit] + properties.flatMap { ["-p", $0] })
        guard result.succeeded else { throw HarnessError("systemctl show failed: \(result)") }
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }

    /// Writes `text` to `path` inside the container (through the root directory on the host).
    func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        let hostPath = root + path
        try text.write(toFile: hostPath, atomically: true, encoding: .utf8)
        guard chmod(hostPath, mode) == 0 else { throw HarnessError("chmod \(hostPath): \(String(cString: strerror(errno)))") }
    }

    /// Reads `path` inside the container.
    func read(_ path: String) throws -> String {
        try String(contentsOfFile: root + path, encoding: .utf8)
    }
}

/// `1.2 s`.
func seconds(_ duration: Duration) -> String {
    let (whole, attoseconds) = duration.components
    return String(format: "%.1f s", Double(whole) + Double(attoseconds) / 1e18)
}

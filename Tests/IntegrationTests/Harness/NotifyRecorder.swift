import AppHostTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `apphostd` run directly as a child process (no systemd), with a `NOTIFY_SOCKET` of the
/// test's own: every `sd_notify` datagram the daemon sends is recorded, in order, with its arrival
/// time, so a test can check exactly what systemd would have been told and when.
///
/// ```swift
/// try await NotifyRecorder.with(config: yaml) { daemon in
///     try await daemon.waitFor("READY=1") { $0.has("READY", "1") }
///     try daemon.send(SIGTERM)
///     let exit = try await daemon.waitForExit()
/// }
/// ```
///
/// Every bounded wait fails with all datagrams so far and the daemon's stderr. The work directory
/// holds the config (`apphostd.yaml`), the state directory (`state/`), the socket and stderr; the
/// daemon gets `MEMORY_PRESSURE_WATCH=/dev/null` so real PSI cannot interfere.
final class NotifyRecorder: Sendable {
    /// One `sd_notify` message.
    struct Datagram: Sendable, CustomStringConvertible {
        /// Position in the recording, from 0.
        let index: Int
        /// The raw text (`READY=1\nSTATUS=active · 4 services`).
        let text: String
        /// When the reader thread received it.
        let arrival: ContinuousClock.Instant

        /// The `KEY=value` lines as a dictionary.
        var fields: [String: String] { DatagramReceiver.fields(text) }

        /// The `STATUS=` text, if the datagram carries one.
        var status: String? { fields["STATUS"] }

        /// Whether it carries `key=value` (`has("READY", "1")`).
        func has(_ key: String, _ value: String) -> Bool { fields[key] == value }

        var isReady: Bool { has("READY", "1") }
        var isReloading: Bool { has("RELOADING", "1") }
        var isStopping: Bool { has("STOPPING", "1") }

        var description: String { "#\(index) " + text.replacingOccurrences(of: "\n", with: " | ") }
    }

    /// How the child ended.
    struct Exit: Sendable, CustomStringConvertible {
        /// Exit status, or 128 + signal number when a signal ended it.
        let status: Int32
        /// When the harness learned of it.
        let at: ContinuousClock.Instant

        var description: String { status > 128 ? "killed by signal \(status - 128)" : "exited \(status)" }
    }

    /// What the reader thread and the termination handler record, and who waits for it.
    private final class Recording: Sendable {
        struct Waiter {
            let from: Int
            let predicate: @Sendable (Datagram) -> Bool
            let continuation: CheckedContinuation<Datagram?, Never>
        }

        struct State {
            var datagrams: [Datagram] = []
            var exit: Exit?
            var waiters: [UUID: Waiter] = [:]
            var exitWaiters: [UUID: CheckedContinuation<Exit?, Never>] = [:]
        }

        let state = Mutex(State())

        /// Records one datagram and resumes the waiters it satisfies.
        func append(_ text: String, arrival: ContinuousClock.Instant) {
            let matched: [(CheckedContinuation<Datagram?, Never>, Datagram)] = state.withLock { state in
                let datagram = Datagram(index: state.datagrams.count, text: text, arrival: arrival)
                state.datagrams.append(datagram)
                var matched: [(CheckedContinuation<Datagram?, Never>, Datagram)] = []
                for (id, waiter) in state.waiters where datagram.index >= waiter.from && waiter.predicate(datagram) {
                    matched.append((waiter.continuation, datagram))
                    state.waiters[id] = nil
                }
                return matched
            }
            for (continuation, datagram) in matched { continuation.resume(returning: datagram) }
        }

        /// Records the exit; datagram waiters get nil (it will never come), exit waiters the exit.
        func finish(_ exit: Exit) {
            let (waiters, exitWaiters) = state.withLock { state in
                state.exit = exit
                defer { state.waiters = [:]; state.exitWaiters = [:] }
                return (state.waiters.values.map(\.continuation), Array(state.exitWaiters.values))
            }
            for waiter in waiters { waiter.resume(returning: nil) }
            for waiter in exitWaiters { waiter.resume(returning: exit) }
        }
    }

    /// Config, state directory, socket and stderr live here.
    let directory: String
    /// The config file passed with `--config`.
    var configPath: String { directory + "/apphostd.yaml" }
    /// The daemon's state directory (`host: state-directory:` in `configText`).
    var stateDirectory: String { directory + "/state" }
    /// Where the daemon's stderr goes.
    var stderrPath: String { directory + "/stderr" }
    /// The notify socket's path.
    var socketPath: String { directory + "/notify.sock" }

    private let recording: Recording
    private let socket: DatagramReceiver
    private let stopReading = Flag()
    private let readerDone = Flag()
    private let process: Process
    /// The child's process id.
    let pid: Int32
    /// When the child was started.
    let startedAt: ContinuousClock.Instant

    // MARK: Lifetime

    /// Writes `config`, starts the daemon on it with its own notify socket, runs `body`, then
    /// kills the daemon if it still runs and removes the work directory.
    /// - Parameters:
    ///   - config: the YAML text; `NotifyRecorder.stateToken` is replaced by the state directory
    ///     and `NotifyRecorder.directoryToken` by the work directory.
    ///   - program: another program to start instead of apphostd, with its arguments (nil:
    ///     `run --config` the written config).
    ///   - environment: extra environment for the daemon.
    ///   - prepare: runs with the work directory before the daemon starts (secrets, record files).
    static func with<R: Sendable>(
        config: String,
        program: (path: String, arguments: [String]?)? = nil,
        environment: [String: String] = [:],
        prepare: (_ directory: String) throws -> Void = { _ in },
        _ body: (NotifyRecorder) async throws -> R
    ) async throws -> R {
        guard let binary = IntegrationEnvironment.apphostdBinary else {
            throw HarnessError("no apphostd binary: \(IntegrationEnvironment.directDaemonProblem ?? "?")")
        }
        let directory = try makeTemporaryDirectory("apphostd-notify")
        try FileManager.default.createDirectory(atPath: directory + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try prepare(directory)
        let recorder = try NotifyRecorder(binary: program?.path ?? binary, arguments: program?.arguments, directory: directory, config: config, environment: environment)
        do {
            let result = try await body(recorder)
            await recorder.shutDown()
            return result
        } catch {
            await recorder.shutDown()
            throw error
        }
    }

    /// Replaced by the state directory in the config text.
    static let stateToken = "@STATE@"
    /// Replaced by the work directory in the config text.
    static let directoryToken = "@DIR@"

    private init(binary: String, arguments: [String]?, directory: String, config: String, environment extra: [String: String]) throws {
        self.directory = directory
        let recording = Recording()
        self.recording = recording
        let text = config
            .replacingOccurrences(of: Self.stateToken, with: directory + "/state")
            .replacingOccurrences(of: Self.directoryToken, with: directory)
        try text.write(toFile: directory + "/apphostd.yaml", atomically: true, encoding: .utf8)

        // The socket systemd would own: AF_UNIX, SOCK_DGRAM, bound to a path.
        let path = directory + "/notify.sock"
        let socket = try DatagramReceiver(path, receiveBufferSize: 4 << 20)
        self.socket = socket

        _ = FileManager.default.createFile(atPath: directory + "/stderr", contents: nil)
        let stderrHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/stderr"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments ?? ["run", "--config", directory + "/apphostd.yaml"]
        var environment = ProcessRunner.environment([
            "NOTIFY_SOCKET": path,
            // Real PSI could fire at random on a busy machine.
            "MEMORY_PRESSURE_WATCH": "/dev/null",
        ])
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderrHandle
        self.process = process

        // The reader starts before the child, so not even its first datagram can be missed.
        let reader = Thread { [recording, stopReading, readerDone] in
            Self.read(socket: socket, into: recording, until: stopReading)
            readerDone.set()
        }
        reader.name = "notify-recorder"
        reader.start()

        let started = ContinuousClock.now
        process.terminationHandler = { [recording] process in
            let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
            recording.finish(Exit(status: status, at: .now))
        }
        do {
            try process.run()
        } catch {
            // The reader ends within its poll interval; the socket closes when it lets go of it.
            stopReading.set()
            throw HarnessError("cannot run \(binary): \(error)")
        }
        try? stderrHandle.close()
        startedAt = started
        pid = process.processIdentifier
    }

    /// The reader thread: one `recv` per datagram, timestamped at once.
    private static func read(socket: DatagramReceiver, into recording: Recording, until stop: Flag) {
        while !stop.isSet {
            guard let text = socket.receive(withinMilliseconds: 50), !text.isEmpty else { continue }
            let arrival = ContinuousClock.now
            recording.append(text, arrival: arrival)
        }
    }

    /// Kills the daemon if it still runs (SIGKILL: the test is over), waits for it and the reader.
    private func shutDown() async {
        if recording.state.withLock({ $0.exit }) == nil {
            kill(pid, SIGKILL)
            _ = await awaitExit(timeout: .seconds(10))
        }
        stopReading.set()
        _ = await eventually(timeout: .seconds(2), every: .milliseconds(10)) { readerDone.isSet }
        socket.close()
    }

    // MARK: Config

    /// Where `probeLogToken` points: the probes' shared record file.
    var probeLogPath: String { directory + "/probe.log" }
    /// Use as a probe's `record-to` in the config text (see `ProbeSpec.yaml(recordTo:)`).
    static let probeLogToken = directoryToken + "/probe.log"

    /// A config: `host:` with the state directory, `log-level: debug` and `host` lines, then the
    /// `services` list items as written (e.g. `"  - logger"` or `ProbeSpec.yaml(recordTo:)`).
    static func configText(services: [String], host: [String] = []) -> String {
        var lines = ["# generated by the integration tests", "host:", "  state-directory: \(stateToken)", "  log-level: debug"]
        lines += host.map { "  " + $0 }
        lines.append("services:")
        lines += services
        return lines.joined(separator: "\n") + "\n"
    }

    /// Replaces the config file atomically (the daemon reads it on SIGHUP); the tokens are
    /// replaced as in `with(config:)`.
    func writeConfig(_ text: String) throws {
        let resolved = text
            .replacingOccurrences(of: Self.stateToken, with: stateDirectory)
            .replacingOccurrences(of: Self.directoryToken, with: directory)
        try resolved.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// What the probes recorded so far.
    var probeLog: ProbeLog { ProbeLog(path: probeLogPath) }

    // MARK: Driving

    /// `SIGRTMIN` of this C library (glibc reserves the first few real-time signals).
    static var sigrtmin: Int32 { __libc_current_sigrtmin() }

    /// `SIGRTMIN+n`.
    static func realtime(_ n: Int32) -> Int32 { sigrtmin + n }

    /// A readable name: `SIGUSR1`, `SIGRTMIN+2`.
    static func name(of signal: Int32) -> String {
        if signal >= sigrtmin { return "SIGRTMIN+\(signal - sigrtmin)" }
        return [SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGHUP: "SIGHUP", SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGKILL: "SIGKILL"][signal] ?? "signal \(signal)"
    }

    /// Sends `signal` to the daemon: `sigqueue` for real-time signals (queued, never merged),
    /// `kill` for the others.
    func send(_ signal: Int32) throws {
        let result = signal >= Self.sigrtmin ? sigqueue(pid, signal, sigval(sival_int: 0)) : kill(pid, signal)
        guard result == 0 else { throw HarnessError("cannot send \(Self.name(of: signal)) to \(pid): \(String(cString: strerror(errno)))") }
    }

    /// How many datagrams arrived so far: the index the next one will have. Take it before sending
    /// a signal and pass it as `after` to wait only for what the signal caused.
    var mark: Int { recording.state.withLock { $0.datagrams.count } }

    // MARK: Observing

    /// Every datagram so far, oldest first.
    var datagrams: [Datagram] { recording.state.withLock { $0.datagrams } }

    /// The datagrams with index in `range` (clamped).
    func datagrams(_ range: Range<Int>) -> [Datagram] {
        let all = datagrams
        let lower = min(max(range.lowerBound, 0), all.count)
        let upper = min(max(range.upperBound, lower), all.count)
        return Array(all[lower..<upper])
    }

    /// How the daemon ended, or nil while it runs.
    var exit: Exit? { recording.state.withLock { $0.exit } }

    /// The daemon's stderr so far.
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// `VmRSS` (or another `/proc/PID/status` field, such as `VmHWM`) in KiB.
    func memory(_ field: String = "VmRSS") throws -> Int {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            if let kib = Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") { return kib }
        }
        throw HarnessError("no \(field) in /proc/\(pid)/status")
    }

    /// The process-directed signals pending for the daemon (`ShdPnd:` in `/proc/PID/status`): sent
    /// but not yet read from its signalfd. Empty once the daemon exited.
    func pendingSignals() -> Set<Int32> {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ShdPnd:") }),
            let mask = UInt64(line.dropFirst("ShdPnd:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return [] }
        return Set((1...64).filter { mask & (UInt64(1) << UInt64($0 - 1)) != 0 }.map(Int32.init))
    }

    /// Every datagram and the tail of stderr, for failure messages.
    func diagnostics() -> String {
        let all = datagrams
        let list = all.map { "  \($0) (+\(Self.milliseconds($0.arrival - startedAt)) ms)" }
        let shown = list.count > 80 ? ["  (\(list.count - 80) earlier)"] + list.suffix(80) : list
        let stderrLines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        return """
            --- daemon \(pid): \(exit.map { "\($0) at +\(Self.milliseconds($0.at - startedAt)) ms" } ?? "running")
            --- \(all.count) datagrams:
            \(shown.joined(separator: "\n"))
            --- stderr (last 60 lines of \(stderrLines.count)):
            \(stderrLines.suffix(60).joined(separator: "\n"))
            --- work directory: \(directory)
            """
    }

    /// A duration in milliseconds, one decimal.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let ms = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.1f", ms)
    }

    // MARK: Waiting

    /// The first datagram with index ≥ `after` that satisfies `predicate`, already recorded or yet
    /// to come. Throws with diagnostics after `timeout`, or as soon as the daemon exits without it.
    @discardableResult
    func waitFor(
        _ what: String,
        after: Int = 0,
        timeout: Duration = .seconds(15),
        where predicate: @escaping @Sendable (Datagram) -> Bool
    ) async throws -> Datagram {
        let id = UUID()
        let takeBack: @Sendable () -> CheckedContinuation<Datagram?, Never>? = { [recording] in
            recording.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation
        }
        let found: Datagram? = await awaitResumption(timeout: timeout, takeBack: takeBack) { continuation in
            let immediate: Datagram?? = recording.state.withLock { state in
                if let hit = state.datagrams.dropFirst(after).first(where: predicate) { return .some(hit) }
                if state.exit != nil { return .some(nil) }
                state.waiters[id] = Recording.Waiter(from: after, predicate: predicate, continuation: continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        if let found { return found }
        let reason = exit.map { "the daemon \($0) before" } ?? "timed out after \(timeout) before"
        throw HarnessError("\(reason) a datagram matched: \(what)\n\(diagnostics())")
    }

    /// Polls `condition` (state of another process, such as the probe log or `/proc`) until it
    /// holds; throws with diagnostics after `timeout`, or once the daemon exited without it.
    func waitUntil(_ what: String, timeout: Duration = .seconds(15), _ condition: () throws -> Bool) async throws {
        var exited = false
        let met = try await eventually(timeout: timeout, every: .milliseconds(5)) {
            if try condition() { return true }
            exited = exit != nil
            return exited
        }
        if met && !exited { return }
        let reason = exited ? "the daemon \(exit.map(\.description) ?? "exited") before" : "timed out after \(timeout) waiting until"
        throw HarnessError("\(reason) \(what)\n--- probe log:\n\(probeLog.tail())\n\(diagnostics())")
    }

    /// Waits until the daemon has read `signal` (it is no longer pending): after this, a signal
    /// sent next is read after it whatever its number.
    func waitUntilRead(_ signal: Int32, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("the daemon read \(Self.name(of: signal))", timeout: timeout) {
            !pendingSignals().contains(signal)
        }
    }

    /// Waits for the daemon to exit; throws with diagnostics after `timeout`.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(15)) async throws -> Exit {
        if let exit = await awaitExit(timeout: timeout) { return exit }
        throw HarnessError("the daemon did not exit within \(timeout)\n\(diagnostics())")
    }

    private func awaitExit(timeout: Duration) async -> Exit? {
        let id = UUID()
        let takeBack: @Sendable () -> CheckedContinuation<Exit?, Never>? = { [recording] in
            recording.state.withLock { $0.exitWaiters.removeValue(forKey: id) }
        }
        return await awaitResumption(timeout: timeout, takeBack: takeBack) { continuation in
            let done: Exit? = recording.state.withLock { state in
                if let exit = state.exit { return exit }
                state.exitWaiters[id] = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

/// Runs `register`, which either resumes the continuation itself or parks it where another thread
/// will resume it; after `timeout` the parked continuation is taken back with `takeBack` (nil when
/// it was resumed meanwhile) and resumed with nil.
private func awaitResumption<T: Sendable>(
    timeout: Duration,
    takeBack: @escaping @Sendable () -> CheckedContinuation<T?, Never>?,
    _ register: (CheckedContinuation<T?, Never>) -> Void
) async -> T? {
    let timer = TimerBox()
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        register(continuation)
        // Why a detached timer: the continuation is resumed by another thread (the reader or the
        // termination handler); only the timeout comes from here. Started once the continuation
        // is parked, cancelled once it was resumed.
        timer.start {
            try? await Task.sleep(for: timeout)
            if Task.isCancelled { return }
            takeBack()?.resume(returning: nil)
        }
    }
    timer.cancel()
    return value
}

/// The timeout task of one wait.
private final class TimerBox: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { $0 = Task.detached(operation: body) }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }
}

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

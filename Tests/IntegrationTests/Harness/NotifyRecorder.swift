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
    final class Recording: Sendable {
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

    let recording: Recording
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
}

import Foundation
import Synchronization
import Testing

/// `apphost-systemd-probe` (Tests/SystemdProbe), run with an environment of the test's:
/// libsystemd reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$LISTEN_FDS` from the process's own.
final class SystemdProbe: @unchecked Sendable {
    /// Beside the test executable, where SwiftPM puts every product of the build.
    static let path: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("apphost-systemd-probe").path
    }()

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered: [UInt8] = []

    /// Starts the probe with `arguments`, `environment` added to a minimal one (PATH only), and
    /// `shell`, when given, as a `sh -c` line that ends in `exec "$@"` (to open fds first).
    init(_ arguments: [String], environment: [String: String] = [:], shell: String? = nil) throws {
        if let shell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shell, "sh", Self.path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.path)
            process.arguments = arguments
        }
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Runs the probe to its end and returns its output lines.
    static func lines(_ arguments: [String], environment: [String: String] = [:], shell: String? = nil) throws -> [String] {
        let probe = try SystemdProbe(arguments, environment: environment, shell: shell)
        try probe.input.fileHandleForWriting.close()
        var lines: [String] = []
        while let line = probe.readLine() { lines.append(line) }
        probe.process.waitUntilExit()
        return lines
    }

    /// The next line the probe printed, or nil at its end.
    func readLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffered.append(contentsOf: chunk)
        }
    }

    /// The next line, read on a thread of its own so no test pool thread blocks in read.
    func nextLine() async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread { continuation.resume(returning: self.readLine()) }.start()
        }
    }

    /// Sends one input line and waits for the probe's `ok`; returns what it printed before.
    @discardableResult
    func send(_ line: String) async throws -> [String] {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        var printed: [String] = []
        while let next = await nextLine() {
            if next == "ok" { return printed }
            printed.append(next)
        }
        Issue.record("the probe ended before answering \(line): \(printed)")
        return printed
    }

    /// Closes its input and waits for it to exit; returns its exit status.
    @discardableResult
    func finish() -> Int32 {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

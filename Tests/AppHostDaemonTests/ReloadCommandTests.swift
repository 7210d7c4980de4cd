@testable import AppHostDaemon
import AppHostSystemd
import AppHostTestSupport
import Foundation
import Testing

/// `apphostd reload` answers for its own request: the record of a reload taken after its SIGHUP,
/// never an older one.
@Suite(.serialized) struct ReloadCommandTests {
    /// A process of ours to signal (SIGHUP ends it; the command only needs the signal to go out).
    static func target() throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try process.run()
        return process
    }

    /// Writes `record` from another thread once the command is waiting, as the daemon would.
    static func answer(_ make: @escaping @Sendable () -> ReloadRecord, in directory: String, after delay: Duration) {
        Thread {
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            try? make().write(to: directory)
        }.start()
    }

    @Test("a record older than the command's signal is not its answer: it waits, and says so when none comes")
    func anOlderRecordIsNotTheAnswer() throws {
        let directory = try makeTemporaryDirectory("apphost-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try ReloadRecord(takenAt: SystemdNotifier.monotonicMicroseconds(), isApplied: false, message: "an older refusal").write(to: directory)
        let process = try Self.target()
        defer { process.terminate() }
        let status = ReloadCommand(pid: "\(process.processIdentifier)", config: nil, stateDirectory: directory, timeout: .milliseconds(300)).run()
        #expect(status == .launchFailed)
    }

    @Test("the daemon's answer after the signal decides: applied exits 0, refused exits 78", arguments: [true, false])
    func theAnswerDecides(applied: Bool) throws {
        let directory = try makeTemporaryDirectory("apphost-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = try Self.target()
        defer { process.terminate() }
        Self.answer({ ReloadRecord(takenAt: SystemdNotifier.monotonicMicroseconds(), isApplied: applied, message: "x") }, in: directory, after: .milliseconds(200))
        let status = ReloadCommand(pid: "\(process.processIdentifier)", config: nil, stateDirectory: directory, timeout: .seconds(20)).run()
        #expect(status == (applied ? .clean : .badConfiguration))
    }

    @Test("no PID, no reload: a usage error that names $MAINPID")
    func aMissingPIDIsAUsageError() {
        #expect(ReloadCommand(pid: "not-a-pid", config: nil, stateDirectory: "/nonexistent").run() == .usage)
    }

    @Test func theRecordRoundTrips() throws {
        let directory = try makeTemporaryDirectory("apphost-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = ReloadRecord(takenAt: 123_456_789, isApplied: false, message: "a.yaml:3: host.x: unknown key\nsecond line")
        try record.write(to: directory)
        #expect(ReloadRecord.read(from: directory) == record)
        try "{\"taken_monotonic_usec\": -1}".write(toFile: ReloadRecord.path(in: directory), atomically: true, encoding: .utf8)
        #expect(ReloadRecord.read(from: directory) == nil)
    }
}

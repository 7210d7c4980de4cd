@testable import AppHostDaemon
import AppHostSystemd
import AppHostTestSupport
import Foundation
import Glibc
import Testing

/// `apphostd reload` answers for its own request: the record of a reload taken after its SIGHUP,
/// never an older one.
@Suite(.serialized) struct ReloadCommandTests {
    /// A process of ours to signal. It inherits this test process's blocked lifecycle signals
    /// (the daemon's C prelude is linked in), so SIGHUP leaves it be; it ends after `seconds`.
    static func target(seconds: Int = 30) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["\(seconds)"]
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
        try ReloadRecord(bootID: ReloadRecord.currentBootID, takenAt: SystemdNotifier.monotonicMicroseconds(), outcome: .refused, message: "an older refusal").write(to: directory)
        let process = try Self.target()
        defer { kill(process.processIdentifier, SIGKILL) }
        let status = ReloadCommand(pid: "\(process.processIdentifier)", config: nil, stateDirectory: directory, timeout: .milliseconds(300)).run()
        #expect(status == .launchFailed)
    }

    @Test("the daemon's answer after the signal decides: applied exits 0, refused 78, not applied (stopping) 1", arguments: [
        (ReloadRecord.Outcome.applied, AppHostDaemon.ExitStatus.clean), (.refused, .badConfiguration), (.notApplied, .launchFailed),
    ])
    func theAnswerDecides(outcome: ReloadRecord.Outcome, expected: AppHostDaemon.ExitStatus) throws {
        let directory = try makeTemporaryDirectory("apphost-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = try Self.target()
        defer { kill(process.processIdentifier, SIGKILL) }
        Self.answer({ ReloadRecord(bootID: ReloadRecord.currentBootID, takenAt: SystemdNotifier.monotonicMicroseconds(), outcome: outcome, message: "x") }, in: directory, after: .milliseconds(200))
        let status = ReloadCommand(pid: "\(process.processIdentifier)", config: nil, stateDirectory: directory, timeout: .seconds(20)).run()
        #expect(status == expected)
    }

    @Test("no PID, no reload: a usage error that names $MAINPID")
    func aMissingPIDIsAUsageError() {
        #expect(ReloadCommand(pid: "not-a-pid", config: nil, stateDirectory: "/nonexistent").run() == .usage)
    }

    @Test("a record of another boot is never the answer, however late its clock")
    func aRecordOfAnotherBootIsNotTheAnswer() {
        let otherBoot = ReloadRecord(bootID: "another-boot", takenAt: .max, outcome: .applied, message: "x")
        #expect(!otherBoot.answers(sentAt: 0))
        #expect(ReloadRecord(bootID: ReloadRecord.currentBootID, takenAt: 10, outcome: .applied, message: "x").answers(sentAt: 10))
        #expect(!ReloadRecord.currentBootID.isEmpty)
    }

    @Test("the command gives up when the daemon exits before it answers")
    func aDaemonThatExitsIsNotWaitedFor() throws {
        let directory = try makeTemporaryDirectory("apphost-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A "daemon" that exits a second later without a record.
        let process = try Self.target(seconds: 1)
        let started = ContinuousClock.now
        let status = ReloadCommand(pid: "\(process.processIdentifier)", config: nil, stateDirectory: directory, timeout: .seconds(60)).run()
        process.waitUntilExit()
        #expect(status == .launchFailed)
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func theRecordRoundTrips() throws {
        let directory = try makeTemporaryDirectory("apphost-reload")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let record = ReloadRecord(bootID: ReloadRecord.currentBootID, takenAt: 123_456_789, outcome: .refused, message: "a.yaml:3: host.x: unknown key\nsecond line")
        try record.write(to: directory)
        #expect(ReloadRecord.read(from: directory) == record)
        try "{\"taken_monotonic_usec\": -1}".write(toFile: ReloadRecord.path(in: directory), atomically: true, encoding: .utf8)
        #expect(ReloadRecord.read(from: directory) == nil)
    }
}

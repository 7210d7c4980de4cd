import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// logind's shutdown under systemd as PID 1 (252, and 257 in scripts/test.sh's trixie pass):
    /// `systemctl poweroff` inside the container, through the harness's guarded helper, gives the
    /// services their saving request (cause `shutdown`) before the `SIGTERM` that follows. A boot
    /// of its own: the test ends it.
    @Suite(.serialized, .needsSystemManager, .bootedSystem)
    struct SystemManagerShutdownTests {
        // Fails on a daemon that does not follow PrepareForShutdown: the SIGTERM is the first it hears.
        @Test("systemctl poweroff: the saving request (background, CAUSE=shutdown, the state to disk) comes before the SIGTERM, which then terminates as ever")
        func aShutdownSavesBeforeTheSIGTERM() async throws {
            guard let system = SystemManager.current else { throw HarnessError("no booted system") }
            let unit = IntegrationSuites.SystemManagerTests.unit
            try await IntegrationSuites.SystemManagerTests.ensureActive(system)
            try await IntegrationSuites.SystemManagerTests.waitForInhibitors(system)
            let invocation = try await IntegrationSuites.SystemManagerTests.invocation(system)
            // A persistent journal, so that the records outlive the container's /run.
            let persistent = try await system.run(["sh", "-c", "mkdir -p /var/log/journal && journalctl --flush"])
            try #require(persistent.succeeded, "\(persistent)")
            try await system.powerOffInside()
            let read = try await ProcessRunner.run(Journal.command(["--directory=\(system.root)/var/log/journal", "_SYSTEMD_INVOCATION_ID=\(invocation)"]))
            let records = try Journal.records(CommandResult(argv: [], status: read.status, stdout: read.stdout, stderr: read.stderr))
            let text = records.suffix(60).map(SystemManager.line).joined(separator: "\n")
            let prepared = try #require(records.first { $0["MESSAGE"]?.hasPrefix("the machine is about to shut down") == true }, "\(text)")
            let background = try #require(records.first { $0["EVENT"] == "didEnterBackground" && $0["CAUSE"] == "shutdown" }, "\(text)")
            let ready = try #require(records.first { $0["MESSAGE"]?.hasPrefix("ready for shutdown after ") == true }, "\(text)")
            let terminating = try #require(records.first { $0["MESSAGE"]?.hasPrefix("terminating: ") == true }, "\(text)")
            let at = { (record: [String: String]) in IntegrationSuites.SystemManagerTests.sentAt(record) ?? 0 }
            #expect(at(prepared) <= at(ready) && at(ready) <= at(terminating), "\(text)")
            #expect(at(background) <= at(terminating), "\(text)")
            #expect(records.contains { $0["MESSAGE"] == "terminated cleanly" }, "the SIGTERM terminates as ever: \(text)")
            let state = system.root + "/var/lib/\(unit)/restorable-state"
            #expect(FileManager.default.fileExists(atPath: state), "no restorable state on disk at \(state)")
        }
    }
}

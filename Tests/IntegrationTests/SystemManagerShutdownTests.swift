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
        // Fails on a daemon that takes a lost system bus for no bus: it stops following logind
        // and keeps its inhibitors, so every later suspend waits for logind's limit.
        @Test("the system bus and logind restarted: the daemon connects again, follows the new logind, and a suspend saves without logind's timeout")
        func theSystemBusComesBack() async throws {
            guard let system = SystemManager.current else { throw HarnessError("no booted system") }
            typealias Suite = IntegrationSuites.SystemManagerTests
            try await Suite.ensureActive(system)
            try await Suite.waitForInhibitors(system)
            let invocation = try await Suite.invocation(system)
            let cursor = try await system.journalCursor()
            let restart = try await system.systemctl("restart", "dbus.service", timeout: .seconds(60))
            try #require(restart.succeeded, "\(restart)")
            // logind 257 no longer answers after its bus restarted (systemd-inhibit --list times
            // out too) until it restarts; 252's carries on. Restarted here under both, which also
            // shows the daemon taking up a new logind (NameOwnerChanged).
            let logind = try await system.systemctl("restart", "systemd-logind.service", timeout: .seconds(60))
            try #require(logind.succeeded, "\(logind)")
            try await Suite.waitForJournal(system, "the daemon following logind again", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor, timeout: .seconds(60)) {
                $0["MESSAGE"] == "logind is on the bus again: following sleep and shutdown"
            }
            try await Suite.waitForInhibitors(system)
            let sleep = try await system.suspend()
            let daemon = sleep.records.filter { $0["_SYSTEMD_INVOCATION_ID"] == invocation }
            #expect(daemon.contains { $0["MESSAGE"]?.hasPrefix("ready for sleep after ") == true }, "\(sleep.text)")
            #expect(!sleep.records.contains { $0["MESSAGE"]?.contains("inhibitor timeout is reached") == true }, "\(sleep.text)")
            try await Suite.waitForStatus(system, "back in the foreground") { $0["StatusText"]?.hasPrefix("active (resume)") == true }
        }

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
            let at = { (record: [String: String]) throws -> Int64 in try #require(IntegrationSuites.SystemManagerTests.sentAt(record), "no timestamp: \(record)") }
            #expect(try at(prepared) <= at(ready) && at(ready) <= at(terminating), "\(text)")
            #expect(try at(background) <= at(terminating), "\(text)")
            // The state went to disk within the saving request (its durable persist), before the
            // release and the SIGTERM.
            #expect(ready["REQUEST_US"].flatMap { Int($0) } != nil, "\(ready)")
            #expect(records.contains { $0["MESSAGE"] == "terminated cleanly" }, "the SIGTERM terminates as ever: \(text)")
            let state = system.root + "/var/lib/\(unit)/restorable-state"
            #expect(FileManager.default.fileExists(atPath: state), "no restorable state on disk at \(state)")
        }
    }
}

import AppHostTestSupport
import Foundation
import Testing

// A SIGUSR1 and logind's sleep, under systemd as PID 1 with the real logind: where the resume
// returns is the machine's, decided in the order the requests are carried out.
extension IntegrationSuites.SystemManagerTests {
    /// Waits for the daemon's "awake again" line after `cursor`, then for the status to settle
    /// as `expected` says, and checks it still says so once the next inhibitors are held (taken
    /// after the resume's request).
    static func statusAfterTheResume(_ system: SystemManager, after cursor: String?, _ what: String, _ expected: @escaping ([String: String]) -> Bool) async throws {
        try await waitForJournal(system, "the daemon's resume", matches: ["-u", unit], after: cursor, timeout: .seconds(30)) {
            $0["MESSAGE"] == "the machine is awake again"
        }
        try await waitForStatus(system, what, expected)
        try await waitForInhibitors(system)
        let status = try await system.show(unit)
        #expect(expected(status), "after the resume: \(status)")
    }

    // The order an operator expects. The race it guards (a SIGUSR1 still queued when logind's
    // signal is read) is rarely hit from outside; MachineSleepTests pins the rule without it.
    @Test("kill -USR1 and at once systemctl suspend: after the resume the daemon is in the background")
    func aToggleRightBeforeTheSuspendIsKept() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await Self.waitForInhibitors(system)
        let cursor = try await system.journalCursor()
        try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
        _ = try await system.suspend()
        try await Self.statusAfterTheResume(system, after: cursor, "the daemon in the background after the resume") {
            $0["StatusText"]?.hasPrefix("background") == true
        }
        try await Self.ensureActive(system)
    }

    // Fails where a SIGUSR1 during the sleep's saving request is carried out at once (the
    // services come to the foreground while the machine sleeps) or is undone by the resume.
    @Test("a SIGUSR1 while a slow service holds the sleep's saving request: no service comes to the foreground before the resume, and after it the daemon is where the toggle asked, the background")
    func aToggleDuringTheSuspendGoesWhereItAsked() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let slow = """
              - name: slow
                type: probe
                settings:
                  faults:
                    - { hook: didEnterBackground, action: hang, duration: 1s }

            """
        try await Self.withAFifthService(system, entry: slow) {
            try await Self.waitForInhibitors(system)
            let invocation = try await Self.invocation(system)
            let cursor = try await system.journalCursor()
            async let sleep = system.suspend()
            // The saving request runs: the slow service is inside its background hook.
            try await Self.waitForJournal(system, "the sleep's saving request", matches: ["-u", Self.unit], after: cursor) {
                $0["MESSAGE"]?.hasPrefix("the machine is about to sleep") == true
            }
            try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
            let slept = try await sleep
            try await Self.statusAfterTheResume(system, after: cursor, "the daemon in the background after the resume") {
                $0["StatusText"]?.hasPrefix("background") == true
            }
            let records = try await system.journal(["-u", Self.unit], after: cursor).filter { $0["_SYSTEMD_INVOCATION_ID"] == invocation }
            #expect(!records.contains { $0["EVENT"] == "willEnterForeground" }, "a service came to the foreground:\n\(slept.text)")
        }
    }

    // Fails where logind is let go before the write: the ready line would come first.
    @Test("the sleep's ready line comes after the restorable state's write (and its fsync), between logind's signal and the release")
    func readyForSleepAfterTheWrite() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await Self.waitForInhibitors(system)
        // The writer says it wrote at debug level.
        try await system.systemctl("service-log-level", Self.unit, "debug")
        let invocation = try await Self.invocation(system)
        let sleep = try await system.suspend()
        try await system.systemctl("service-log-level", Self.unit, "info")
        let daemon = sleep.records.filter { $0["_SYSTEMD_INVOCATION_ID"] == invocation }.compactMap { $0["MESSAGE"] }
        let about = try #require(daemon.firstIndex { $0.hasPrefix("the machine is about to sleep") }, "\(sleep.text)")
        let ready = try #require(daemon.firstIndex { $0.hasPrefix("ready for sleep after ") }, "\(sleep.text)")
        #expect(daemon[about..<ready].contains("restorable state written"), "no write between logind's signal and the ready line:\n\(sleep.text)")
        try await Self.statusAfterTheResume(system, after: nil, "the daemon back in the foreground") {
            $0["StatusText"]?.hasPrefix("active") == true
        }
    }
}

import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// The harness for the logind work (issue 40), proven before the daemon uses it: the booted
    /// Debian root runs logind and polkitd, sleeps only on the test's terms, and gives login
    /// sessions, inhibitors and logind's signals to look at. Nothing of the daemon is tested here.
    ///
    /// Under bookworm (systemd 252) and, with `APPHOSTD_DEBIAN_RELEASE=trixie`, under trixie
    /// (systemd 257): scripts/test.sh's trixie pass names this suite next to SystemManagerTests.
    ///
    /// One boot for the suite; the tests run in source order, and the last powers the container
    /// off from inside.
    @Suite(.serialized, .needsSystemManager, .bootedSystem)
    struct LogindContainerTests {
        static func system() throws -> SystemManager {
            guard let system = SystemManager.current else { throw HarnessError("no booted system (the suite's .bootedSystem trait provides it)") }
            return system
        }

        /// `2.241 s`: finer than `seconds(_:)`, for logind's waits.
        static func milliseconds(_ duration: Duration) -> String {
            String(format: "%.3f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }

        static let prepareForSleep = "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'"

        /// `busctl get-property`/`call` on logind's manager, its answer's text (`t 2000000`).
        static func logindManager(_ system: SystemManager, _ arguments: [String]) async throws -> String {
            let result = try await system.run(["busctl"] + arguments.prefix(1) + ["org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager"] + arguments.dropFirst())
            guard result.succeeded else { throw HarnessError("busctl on logind failed: \(result)") }
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The records logind or systemd-sleep would leave when asked to sleep: there must be
        /// none after a refusal.
        static func sleepTraces(_ records: [[String: String]]) -> [[String: String]] {
            records.filter { record in
                record["UNIT"] == "systemd-suspend.service" || record["SYSLOG_IDENTIFIER"] == "systemd-sleep"
                    || (record["SYSLOG_IDENTIFIER"] == "systemd-logind" && record["MESSAGE"]?.contains("suspend") == true)
            }
        }

        @Test("the root runs logind, knows polkit, has the user tester, and logind reads the test's settings: InhibitDelayMaxUSec 2 s, CanSuspend yes")
        func logindReadsTheTestSettings() async throws {
            let system = try Self.system()
            #expect(try await system.show("systemd-logind.service", ["ActiveState"])["ActiveState"] == "active")
            // polkit.service is started by D-Bus activation, on logind's first question.
            #expect(try await system.show("polkit.service", ["LoadState"])["LoadState"] == "loaded")
            let delay = try await Self.logindManager(system, ["get-property", "InhibitDelayMaxUSec"])
            #expect(delay == "t \(SystemManager.inhibitDelayMax.components.seconds * 1_000_000)")
            let canSuspend = try await Self.logindManager(system, ["call", "CanSuspend"])
            #expect(canSuspend == #"s "yes""#, "logind cannot suspend the container: \(canSuspend)")
            let state = try await system.run(["sh", "-c", "stat -f -c %T /sys/power/state; cat /sys/power/state"])
            #expect(!state.stdout.hasPrefix("sysfs"), "\(state)")
            #expect(state.stdout.hasSuffix(SystemManager.powerStateText), "\(state)")
            let execStart = try await system.show("systemd-suspend.service", ["ExecStart"])["ExecStart"] ?? ""
            #expect(execStart.hasPrefix("{ path=/bin/true ;"), "\(execStart)")
            let tester = try await system.run(["id", "-u", SystemManager.testUser])
            #expect(tester.succeeded, "\(tester)")
        }

        @Test("a user without privileges takes a delay inhibitor for sleep and one for shutdown (polkitd allows it), and systemd-inhibit --list shows both")
        func unprivilegedDelayInhibitors() async throws {
            let system = try Self.system()
            let sleep = try await system.holdInhibitor(what: "sleep", user: "nobody", who: "apphostd-test-sleep", why: "saving state before sleep")
            let shutdown = try await system.holdInhibitor(what: "shutdown", user: "nobody", who: "apphostd-test-shutdown", why: "saving state before shutdown")
            let list = try await system.inhibitors()
            print("IntegrationTests: systemd \(system.systemdVersion) inhibitors:\n\(list)")
            for (who, what) in [("apphostd-test-sleep", "sleep"), ("apphostd-test-shutdown", "shutdown")] {
                let line = list.split(separator: "\n").first { $0.hasPrefix(who + " ") }
                #expect(line?.contains(" nobody ") == true && line?.contains(" \(what) ") == true && line?.hasSuffix(" delay") == true, "\(list)")
            }
            // logind asked polkit, which D-Bus started for it.
            #expect(try await system.show("polkit.service", ["ActiveState"])["ActiveState"] == "active")
            try await system.systemctl("stop", sleep, shutdown)
            let after = try await system.inhibitors()
            #expect(!after.contains("apphostd-test-"), "\(after)")
        }

        @Test("suspend() refuses without the systemd-suspend drop-in, with another text in the bound /sys/power/state, or with another machine's marker, and logind is never asked")
        func suspendRefusesWithoutItsSafeguards() async throws {
            let system = try Self.system()
            let monitor = try await system.startBusMonitor(match: Self.prepareForSleep)
            let cursor = try await system.journalCursor()
            let dropIn = system.root + SystemManager.suspendDropIn
            // Without the drop-in systemd-suspend.service would run systemd-sleep, which could
            // still write only into the bound file; the helper refuses all the same.
            try FileManager.default.removeItem(atPath: dropIn)
            try await system.systemctl("daemon-reload")
            let withoutDropIn = await #expect(throws: PowerActionRefused.self) { try await system.suspend() }
            #expect(withoutDropIn?.reason.contains("systemd-sleep") == true, "\(String(describing: withoutDropIn))")
            try SystemManager.suspendDropInText.write(toFile: dropIn, atomically: true, encoding: .utf8)
            try await system.systemctl("daemon-reload")
            let execStart = try await system.show("systemd-suspend.service", ["ExecStart"])["ExecStart"] ?? ""
            try #require(execStart.hasPrefix("{ path=/bin/true ;"), "the drop-in is not back: \(execStart)")

            // In place (same inode): the bind mount shows the file nspawn bound, not a new one.
            try "mem\n".write(toFile: system.powerStateFile, atomically: false, encoding: .utf8)
            let otherText = await #expect(throws: PowerActionRefused.self) { try await system.suspend() }
            #expect(otherText?.reason.contains("does not hold the test's text") == true, "\(String(describing: otherText))")
            try SystemManager.powerStateText.write(toFile: system.powerStateFile, atomically: false, encoding: .utf8)
            #expect(try await system.run(["cat", "/sys/power/state"]).stdout == SystemManager.powerStateText)

            // Another machine's marker: not this boot's container.
            let marker = system.root + SystemManager.machineMarker
            let machine = try String(contentsOfFile: marker, encoding: .utf8)
            try "apphostd-it-elsewhere\n".write(toFile: marker, atomically: true, encoding: .utf8)
            let otherMachine = await #expect(throws: PowerActionRefused.self) { try await system.suspend() }
            #expect(otherMachine?.reason.contains("does not name this boot's machine") == true, "\(String(describing: otherMachine))")
            try machine.write(toFile: marker, atomically: true, encoding: .utf8)

            // The script stopped before systemctl suspend, so nothing can come later.
            let traces = Self.sleepTraces(try await system.journal([], after: cursor))
            #expect(traces.isEmpty, "\(traces.map(SystemManager.line))")
            let signals = try system.signals(monitor)
            #expect(signals.isEmpty, "\(signals)")
            try await system.stop(monitor)
        }

        @Test("suspend(): logind sends PrepareForSleep(true) then (false), systemd-suspend.service runs /bin/true, and the bound /sys/power/state is unchanged")
        func suspendRunsTheNoOp() async throws {
            let system = try Self.system()
            let monitor = try await system.startBusMonitor(match: Self.prepareForSleep)
            let record = try await system.suspend()
            let seen = try await system.waitForSignal(monitor, "PrepareForSleep(false)") { $0.member == "PrepareForSleep" && $0.boolean == false }
            #expect(seen.map(\.boolean) == [true, false], "\(seen)")
            #expect(record.suspendJobResult == "done", "\(record.text)")
            #expect(record.first(containing: "The system will suspend now!", from: "systemd-logind") != nil, "\(record.text)")
            // No delay lock was held: logind did not wait.
            #expect(record.first(containing: "Delay lock is active", from: "systemd-logind") == nil, "\(record.text)")
            // systemd-sleep logs "Entering sleep state" or its failure to write; /bin/true nothing.
            #expect(!record.records.contains { $0["SYSLOG_IDENTIFIER"] == "systemd-sleep" }, "\(record.text)")
            #expect(try String(contentsOfFile: system.powerStateFile, encoding: .utf8) == SystemManager.powerStateText)
            print("IntegrationTests: systemd \(system.systemdVersion): suspend() took \(seconds(record.duration)) from the call to logind's \"\(record.records.first(where: SuspendRecord.isOperationFinished)?["MESSAGE"] ?? "?")\"")
            try await system.stop(monitor)
        }

        @Test("a delay inhibitor that is never released holds the sleep for InhibitDelayMaxSec=2, then logind goes on and says so")
        func unreleasedDelayLockWaitsInhibitDelayMax() async throws {
            let system = try Self.system()
            let holder = try await system.holdInhibitor(what: "sleep", user: "nobody", who: "apphostd-test-holder", why: "never releases")
            let record = try await system.suspend()
            try await system.systemctl("stop", holder)
            let began = try #require(record.first(containing: "The system will suspend now!", from: "systemd-logind"), "\(record.text)")
            let timedOut = try #require(record.first(containing: "but inhibitor timeout is reached", from: "systemd-logind"), "\(record.text)")
            let suspendStart = try #require(record.records.first { $0["UNIT"] == "systemd-suspend.service" }, "\(record.text)")
            let waited = try #require(SuspendRecord.monotonic(timedOut)) - (try #require(SuspendRecord.monotonic(began)))
            let untilSuspend = try #require(SuspendRecord.monotonic(suspendStart)) - (try #require(SuspendRecord.monotonic(began)))
            print("IntegrationTests: systemd \(system.systemdVersion): logind waited \(Self.milliseconds(waited)) for the unreleased delay lock (InhibitDelayMaxSec=2) and started systemd-suspend.service \(Self.milliseconds(untilSuspend)) after 'The system will suspend now!'; \"\(timedOut["MESSAGE"] ?? "")\"")
            #expect(waited >= SystemManager.inhibitDelayMax - .milliseconds(50), "logind gave up early: \(waited)")
            #expect(waited < SystemManager.inhibitDelayMax + .milliseconds(1500), "logind waited \(waited)")
            #expect(record.suspendJobResult == "done", "\(record.text)")
        }

        @Test("a session from openSession(user: tester): loginctl lock-session emits the session's Lock, unlock-session its Unlock")
        func sessionLockSignals() async throws {
            let system = try Self.system()
            let monitor = try await system.startBusMonitor(match: "type='signal',interface='org.freedesktop.login1.Session'")
            let id = try await system.openSession(user: SystemManager.testUser)
            let path = try #require(SystemManager.busctlString(try await Self.logindManager(system, ["call", "GetSession", "s", id])))
            print("IntegrationTests: systemd \(system.systemdVersion): session \(id) at \(path)")
            try await system.lockSession(id)
            try await system.waitForSignal(monitor, "Lock of session \(id)") { $0.member == "Lock" && $0.path == path }
            try await system.unlockSession(id)
            let seen = try await system.waitForSignal(monitor, "Unlock of session \(id)") { $0.member == "Unlock" && $0.path == path }
            #expect(seen.filter { $0.path == path && ["Lock", "Unlock"].contains($0.member) }.map(\.member) == ["Lock", "Unlock"], "\(seen)")
            try await system.closeSession(id)
            try await system.stop(monitor)
        }

        // The last test: the container is gone after it.
        @Test("powerOffInside(): systemctl poweroff inside after the checks; nspawn exits, and the harness runs nothing more in it")
        func powerOffInsideStopsTheContainer() async throws {
            let system = try Self.system()
            let clock = ContinuousClock()
            let began = clock.now
            try await system.powerOffInside()
            print("IntegrationTests: systemd \(system.systemdVersion): powerOffInside() took \(seconds(clock.now - began)) until nspawn exited")
            #expect(!system.isRunning)
            await #expect(throws: HarnessError.self) { try await system.run(["true"]) }
            #expect(FileManager.default.fileExists(atPath: system.root + SystemManager.machineMarker), "the root stays until powerOff()")
        }
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// README promises that were tested in-process only, end to end through the daemon with a
    /// recorded notify socket: a long launch asks for more time, SIGINT terminates, a daemon
    /// that cannot set itself up exits 1, and exec's timeout kills the program.
    @Suite(.serialized, .enabled(if: IntegrationEnvironment.directDaemonProblem == nil, Comment(rawValue: IntegrationEnvironment.directDaemonProblem ?? "")))
    struct DaemonPromisesTests {
        @Test("a long launch sends EXTEND_TIMEOUT_USEC= before READY=1, covering the next service's launch deadline")
        func aLongLaunchAsksForMoreTime() async throws {
            let slow = ProbeSpec("slow", launchDeadline: "5s", faults: [.init(hook: "didFinishLaunching", action: "hang", duration: "1s")])
            let config = NotifyRecorder.configText(services: ["  - logger", slow.yaml(recordTo: NotifyRecorder.probeLogToken)])
            try await NotifyRecorder.with(config: config) { daemon in
                let ready = try await daemon.waitFor("READY=1") { $0.isReady }
                let extensions = daemon.datagrams.prefix(ready.index).compactMap { $0.fields["EXTEND_TIMEOUT_USEC"].flatMap(UInt64.init) }
                // After the logger launched, the next step is slow's launch: twice its 5 s deadline, and a second.
                #expect(extensions.contains { $0 >= 10_000_000 }, "\(daemon.datagrams.map(\.description))")
                try daemon.send(SIGTERM)
                #expect(try await daemon.waitForExit().status == 0)
            }
        }

        @Test("SIGINT terminates as SIGTERM does: STOPPING=1, willTerminate to every service, exit 0")
        func sigintTerminates() async throws {
            let config = NotifyRecorder.configText(services: ["  - logger", ProbeSpec("p").yaml(recordTo: NotifyRecorder.probeLogToken)])
            try await NotifyRecorder.with(config: config) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                try daemon.send(SIGINT)
                try await daemon.waitFor("STOPPING=1") { $0.isStopping }
                let exit = try await daemon.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(daemon.diagnostics())")
                #expect(daemon.probeLog.events(of: "p").last == "willTerminate", "\(daemon.probeLog)")
            }
        }

        @Test("a daemon that cannot set itself up (its state directory cannot be made) exits 1 and says why in STATUS=")
        func cannotSetUpExitsOne() async throws {
            let config = NotifyRecorder.configText(services: ["  - logger"], host: [])
                .replacingOccurrences(of: "state-directory: \(NotifyRecorder.stateToken)", with: "state-directory: /proc/apphostd-cannot-be-made")
            try await NotifyRecorder.with(config: config) { daemon in
                let exit = try await daemon.waitForExit()
                #expect(exit.status == 1, "\(exit)\n\(daemon.diagnostics())")
                #expect(daemon.datagrams.contains { $0.status?.contains("/proc/apphostd-cannot-be-made") == true }, "\(daemon.diagnostics())")
                #expect(!daemon.datagrams.contains { $0.isReady })
            }
        }

        @Test("exec's timeout through the daemon: the program is terminated, the journal says so, the daemon goes on")
        func execTimeoutThroughTheDaemon() async throws {
            // A sleep no other process has: its argument, for pgrep.
            let marker = "3600.\(Int.random(in: 100_000...999_999))"
            let config = NotifyRecorder.configText(services: [
                "  - logger",
                "  - name: slow-script",
                "    type: exec",
                "    deadline: 10s",
                "    settings:",
                "      on: [didEnterBackground]",
                "      run: [\"/bin/sleep\", \"\(marker)\"]",
                "      timeout: 300ms",
            ])
            try await NotifyRecorder.with(config: config) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                try daemon.send(SIGUSR1)
                try await daemon.waitFor("background") { $0.status?.hasPrefix("background") == true }
                #expect(daemon.stderr.contains("timed out after 300ms on didEnterBackground and was terminated"), "\(daemon.diagnostics())")
                let left = try await ProcessRunner.run(["pgrep", "-f", "sleep \(marker)"])
                #expect(left.status == 1, "the timed-out program still runs: \(left)")
                try daemon.send(SIGTERM)
                #expect(try await daemon.waitForExit().status == 0)
            }
        }
    }
}

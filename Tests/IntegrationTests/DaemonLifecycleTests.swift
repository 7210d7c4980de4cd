import Foundation
import Testing

extension IntegrationSuites {
    /// Start, stop and launch failures of apphostd as a `Type=notify` user unit.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonLifecycleTests {
        @Test("systemctl start returns only after READY: the state is active and every probe saw didBecomeActive")
        func startReturnsAfterReady() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("first"), ProbeSpec("second")]) { daemon in
                let clock = ContinuousClock()
                let began = clock.now
                try await daemon.startOrFail()
                let elapsed = clock.now - began
                // Read both right away: no polling, READY=1 must already imply them.
                let log = daemon.probeLog
                let status = try await daemon.status()
                print("IntegrationTests: systemctl start apphostd took \(elapsed)")
                let context = "\(status)\n\(log)"
                #expect(status["ActiveState"] == "active", "\(context)")
                #expect(DaemonUnderTest.stateWord(of: status["StatusText"] ?? "") == "active", "StatusText: \(status["StatusText"] ?? "")")
                #expect(status["StatusText"]?.contains("2 services") == true, "StatusText: \(status["StatusText"] ?? "")")
                let launch = ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"]
                #expect(log.events(of: "first") == launch, "\(log)")
                #expect(log.events(of: "second") == launch, "\(log)")
                // Up events go in registration order.
                #expect(log.instances(that: "willFinishLaunching") == ["first", "second"], "\(log)")
                #expect(log.instances(that: "didBecomeActive") == ["first", "second"], "\(log)")
            }
        }

        @Test("stop ends with Result=success and every service saw willTerminate, in reverse registration order")
        func stopTerminatesInReverseOrder() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b"), ProbeSpec("c")]) { daemon in
                try await daemon.startOrFail()
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                let status = try await daemon.status()
                let log = daemon.probeLog
                let diagnostics = await daemon.diagnostics()
                #expect(status["ActiveState"] == "inactive", "\(status)")
                #expect(status["Result"] == "success", "\(diagnostics)")
                // systemd counts death by SIGTERM as success too: require a real exit(0).
                #expect(daemon.lastExit == "success exited 0", "not a clean exit: \(diagnostics)")
                #expect(log.instances(that: "willTerminate") == ["c", "b", "a"], "\(log)")
                for name in ["a", "b", "c"] {
                    #expect(log.events(of: name).last == "willTerminate", "\(name): \(log.events(of: name))")
                    #expect(log.violations(of: name).isEmpty, "\(name): \(log.violations(of: name))")
                }
            }
        }

        @Test("a service that hangs in launch beyond TimeoutStartSec gets the unit failed with Result=timeout")
        func launchHangTimesOut() async throws {
            let hanger = ProbeSpec("hanger", launchDeadline: "60s", faults: [.init(hook: "willFinishLaunching", action: "hang")])
            try await DaemonUnderTest.with(services: [hanger, ProbeSpec("after")], unit: { unit, _ in
                unit.timeoutStartSec = "3s"
                unit.timeoutStopSec = "3s"
            }) { daemon in
                let clock = ContinuousClock()
                let began = clock.now
                let start = try await daemon.start()
                let elapsed = clock.now - began
                #expect(!start.succeeded, "start succeeded although a service hangs in launch: \(start)")
                let (status, diagnostics) = try await daemon.failedStart()
                #expect(status["ActiveState"] == "failed", "\(diagnostics)")
                #expect(status["Result"] == "timeout", "\(diagnostics)")
                #expect(daemon.lastExit?.hasPrefix("timeout ") == true, "\(diagnostics)")
                // No EXTEND_TIMEOUT_USEC= may stretch the start while the first service is stuck.
                #expect(elapsed < .seconds(15), "start took \(elapsed) with TimeoutStartSec=3s")
                let log = daemon.probeLog
                #expect(log.events(of: "hanger").first == "willFinishLaunching", "\(log)")
                #expect(!log.contains("after", "didFinishLaunching"), "a service launched past the hanging one: \(log)")
            }
        }

        @Test("systemctl stop while a service hangs in launch: the launch is abandoned, the launched services terminate, exit 0")
        func stopDuringLaunch() async throws {
            // A launch deadline far beyond the stop timeout: waiting for it would end in SIGKILL.
            // The stop waits for the cut-short hook (the hanger's willTerminate queues behind it)
            // no longer than the terminate deadline.
            let hanger = ProbeSpec("hanger", required: true, launchDeadline: "60s", faults: [.init(hook: "willFinishLaunching", action: "hang")])
            try await DaemonUnderTest.with(services: [ProbeSpec("before"), hanger, ProbeSpec("after")], host: ["terminate-deadline: 2s"], unit: { unit, _ in
                unit.timeoutStartSec = "90s"
                unit.timeoutStopSec = "10s"
            }) { daemon in
                let start = try await daemon.sandbox.systemctl("start", "--no-block", daemon.unitName)
                #expect(start.succeeded, "\(start)")
                try await daemon.waitUntil("hanger is in willFinishLaunching") {
                    daemon.probeLog.contains("hanger", "willFinishLaunching")
                }
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                try await daemon.waitUntil("ExecStopPost recorded the exit", whileRunning: false) { daemon.lastExit != nil }
                let diagnostics = await daemon.diagnostics()
                #expect(daemon.lastExit == "success exited 0", "\(diagnostics)")
                let log = daemon.probeLog
                #expect(log.events(of: "before") == ["willFinishLaunching", "didFinishLaunching", "willTerminate"], "\(log)")
                #expect(log.events(of: "hanger") == ["willFinishLaunching"], "\(log)")
                #expect(log.events(of: "after").isEmpty, "\(log)")
                #expect(try await daemon.daemonRecords().contains { ($0["MESSAGE"] ?? "").contains("terminated during launch") }, "\(diagnostics)")
            }
        }

        @Test("a required service refusing didFinishLaunching fails the unit: exit-code, StatusText names it, rollback")
        func requiredLaunchFailureRollsBack() async throws {
            let refuser = ProbeSpec("refuser", required: true, faults: [.init(hook: "didFinishLaunching", action: "refuse")])
            try await DaemonUnderTest.with(services: [ProbeSpec("early"), ProbeSpec("middle"), refuser, ProbeSpec("late")]) { daemon in
                let start = try await daemon.start()
                #expect(!start.succeeded, "start succeeded although a required service refused: \(start)")
                let (status, diagnostics) = try await daemon.failedStart()
                daemon.expectExited(with: 1, (status, diagnostics))
                #expect(status["StatusText"]?.contains("refuser") == true, "StatusText does not name the service: \(diagnostics)")
                let log = daemon.probeLog
                // Rollback: the services launched before it terminate, last launched first.
                #expect(log.instances(that: "willTerminate").filter { $0 != "refuser" } == ["middle", "early"], "\(log)")
                #expect(log.events(of: "late").isEmpty, "a service after the failed required one launched: \(log)")
                #expect(!log.contains("early", "didBecomeActive"), "became active despite the failed launch: \(log)")
                let journal = try await daemon.journal()
                #expect(journal.contains { ($0["MESSAGE"] ?? "").contains("refuser") && ($0["PRIORITY"].flatMap(Int.init) ?? 7) <= 3 },
                        "no error record naming the service:\n\(diagnostics)")
            }
        }
    }
}

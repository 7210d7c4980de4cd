import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// Signals that arrive while the host is busy (launching, terminating): the daemon run directly
    /// with a recorded notify socket, so the exact `sd_notify` sequence and its timing are checked.
    ///
    /// A stop must never queue behind another request; a reload must never be announced after
    /// `STOPPING=1` nor in the middle of launch.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the apphostd binary (reason printed)")
    )
    struct DaemonSignalOrderTests {
        /// The signals a test is parameterised over, by name (SIGRTMIN is only known at run time).
        static func signal(named name: String) -> Int32 {
            switch name {
            case "SIGUSR1": SIGUSR1
            case "SIGHUP": SIGHUP
            case "SIGTERM": SIGTERM
            case let name where name.hasPrefix("SIGRTMIN+"): NotifyRecorder.realtime(Int32(name.dropFirst("SIGRTMIN+".count))!)
            default: fatalError("unknown signal \(name)")
            }
        }

        /// The logger and one probe `p` with `faults`, recording to the probe log.
        /// The terminate deadline bounds how long a stop waits for a launch hook it cut short
        /// (its service's willTerminate queues behind it).
        static func config(faults: [ProbeSpec.Fault]) -> String {
            NotifyRecorder.configText(services: [
                "  - logger",
                ProbeSpec("p", faults: faults).yaml(recordTo: NotifyRecorder.probeLogToken),
            ], host: ["terminate-deadline: 1s"])
        }

        /// Today the first signal's request (background, reload) waits for the launch to finish and
        /// SIGTERM waits behind it: the daemon sends READY=1, brings the probe to the foreground
        /// (or background) and only then terminates, about 4.4 s after SIGTERM.
        @Test(
            "SIGTERM during launch does not wait behind a signal that came first: exit 0 within 2.5 s, STOPPING=1, never READY=1, no foreground or background hooks",
            arguments: ["SIGUSR1", "SIGRTMIN+1", "SIGHUP"]
        )
        func stopDuringLaunchDoesNotWaitBehindEarlierSignal(first: String) async throws {
            let hang = ProbeSpec.Fault(hook: "didFinishLaunching", action: "hang", duration: "5s")
            try await NotifyRecorder.with(config: Self.config(faults: [hang])) { daemon in
                try await daemon.waitUntil("p began didFinishLaunching (which hangs 5 s)") {
                    daemon.probeLog.contains("p", "didFinishLaunching")
                }
                let firstSignal = Self.signal(named: first)
                try daemon.send(firstSignal)
                // SIGRTMIN+1 outranks nothing: were both pending, SIGTERM would be read first.
                try await daemon.waitUntilRead(firstSignal)
                let stopSent = ContinuousClock.now
                try daemon.send(SIGTERM)
                let exit = try await daemon.waitForExit(timeout: .seconds(20))
                let took = exit.at - stopSent
                let log = daemon.probeLog
                let datagrams = daemon.datagrams
                print("IntegrationTests: \(first) then SIGTERM during launch: \(exit) \(NotifyRecorder.milliseconds(took)) ms after SIGTERM; datagrams: \(datagrams.map(\.description))")

                #expect(exit.status == 0, "\(daemon.diagnostics())")
                #expect(took < .milliseconds(2500), "exit came \(NotifyRecorder.milliseconds(took)) ms after SIGTERM: the stop waited behind \(first)\n\(daemon.diagnostics())")
                #expect(datagrams.contains { $0.isStopping }, "no STOPPING=1\n\(daemon.diagnostics())")
                #expect(!datagrams.contains { $0.isReady }, "READY=1 although stopped during launch\n\(daemon.diagnostics())")
                for event in ["didBecomeActive", "didEnterBackground", "willResignActive"] {
                    #expect(!log.contains("p", event), "p got \(event) although stopped during launch:\n\(log)")
                }
            }
        }

        /// Today SIGHUP read after SIGTERM is still handled once terminate finished: `RELOADING=1`
        /// (and then `READY=1`) after `STOPPING=1`, which tells systemd the unit is reloading while
        /// it is on its way out.
        @Test("SIGHUP during terminate sends no RELOADING=1 (and no READY=1) after STOPPING=1, and the daemon exits 0")
        func reloadDuringTerminateIsNotAnnounced() async throws {
            let hang = ProbeSpec.Fault(hook: "willTerminate", action: "hang", duration: "1s")
            try await NotifyRecorder.with(config: Self.config(faults: [hang])) { daemon in
                try await daemon.waitFor("READY=1 (launched)") { $0.isReady }
                let mark = daemon.mark
                try daemon.send(SIGTERM)
                let stopping = try await daemon.waitFor("STOPPING=1", after: mark) { $0.isStopping }
                try await daemon.waitUntil("p began willTerminate (which hangs 1 s)") {
                    daemon.probeLog.contains("p", "willTerminate")
                }
                try daemon.send(SIGHUP)
                let exit = try await daemon.waitForExit(timeout: .seconds(20))
                let after = daemon.datagrams(stopping.index + 1..<Int.max)
                print("IntegrationTests: SIGHUP during terminate: \(exit); datagrams after STOPPING=1: \(after.map(\.description))")

                #expect(exit.status == 0, "\(daemon.diagnostics())")
                #expect(!after.contains { $0.isReloading }, "RELOADING=1 after STOPPING=1\n\(daemon.diagnostics())")
                #expect(!after.contains { $0.isReady }, "READY=1 after STOPPING=1\n\(daemon.diagnostics())")
            }
        }

        /// Today the reload is announced (`RELOADING=1`) at once, in the middle of launch, before
        /// the launch's `READY=1`; the reload itself then runs after the launch.
        @Test("SIGHUP during launch is handled after launch: READY=1, then RELOADING=1, then READY=1, and the daemon keeps running")
        func reloadDuringLaunchWaitsForLaunch() async throws {
            let hang = ProbeSpec.Fault(hook: "didFinishLaunching", action: "hang", duration: "1s")
            try await NotifyRecorder.with(config: Self.config(faults: [hang])) { daemon in
                try await daemon.waitUntil("p began didFinishLaunching (which hangs 1 s)") {
                    daemon.probeLog.contains("p", "didFinishLaunching")
                }
                try daemon.send(SIGHUP)
                let launched = try await daemon.waitFor("READY=1 (launched)") { $0.isReady }
                let reloading = try await daemon.waitFor("RELOADING=1") { $0.isReloading }
                let reloaded = try await daemon.waitFor("READY=1 ending the reload", after: reloading.index + 1) { $0.isReady }
                print("IntegrationTests: SIGHUP during launch: \(daemon.datagrams.map(\.description))")

                #expect(reloading.index > launched.index, "RELOADING=1 (#\(reloading.index)) before the launch's READY=1 (#\(launched.index))\n\(daemon.diagnostics())")
                #expect(reloaded.index > launched.index, "\(daemon.diagnostics())")
                #expect(daemon.datagrams.filter(\.isReloading).count == 1, "one SIGHUP, one reload\n\(daemon.diagnostics())")
                #expect(daemon.exit == nil, "the daemon did not keep running\n\(daemon.diagnostics())")
                #expect(daemon.probeLog.contains("p", "didBecomeActive"), "\(daemon.probeLog)")

                let mark = daemon.mark
                try daemon.send(SIGTERM)
                try await daemon.waitFor("STOPPING=1", after: mark) { $0.isStopping }
                #expect(try await daemon.waitForExit().status == 0, "\(daemon.diagnostics())")
            }
        }
    }
}

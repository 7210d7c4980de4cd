import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// A hook that blocks its thread for good does not keep the daemon from exiting.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the apphostd binary (reason printed)")
    )
    struct DaemonStuckHookTests {
        @Test("a willTerminate that blocks its thread forever: the daemon still exits 0 soon after the terminate deadline")
        func blockedWillTerminateDoesNotHoldTheExit() async throws {
            let block = ProbeSpec.Fault(hook: "willTerminate", action: "block", duration: nil)
            let config = NotifyRecorder.configText(
                services: ["  - logger", ProbeSpec("p", faults: [block]).yaml(recordTo: NotifyRecorder.probeLogToken)],
                host: ["terminate-deadline: 500ms"]
            )
            try await NotifyRecorder.with(config: config) { daemon in
                try await daemon.waitFor("READY=1 (launched)") { $0.isReady }
                let stopSent = ContinuousClock.now
                try daemon.send(SIGTERM)
                let exit = try await daemon.waitForExit(timeout: .seconds(20))
                let took = exit.at - stopSent
                #expect(exit.status == 0, "\(daemon.diagnostics())")
                // The terminate deadline (0.5 s), then a grace of the deadline plus 1 s.
                #expect(took < .seconds(6), "exit came \(NotifyRecorder.milliseconds(took)) ms after SIGTERM\n\(daemon.diagnostics())")
                #expect(daemon.probeLog.contains("p", "willTerminate"), "p never got willTerminate")
            }
        }
    }
}

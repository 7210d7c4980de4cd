import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// `STATUS=` is the host's answer to a request: one datagram per request, saying where the
    /// request left the daemon, session lock included; never an intermediate state that a second
    /// datagram corrects a moment later.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the apphostd binary (reason printed)")
    )
    struct DaemonStatusPerRequestTests {
        /// The shipped services (config/apphostd.yaml) with the session-lock secret in a file of the
        /// test's own and no grace period: the session locks on entering the background.
        static let config = NotifyRecorder.configText(services: [
            "  - name: logger",
            "    type: logger",
            "    required: true",
            "  - name: analytics",
            "    type: analytics",
            "  - name: session-lock",
            "    type: session-lock",
            "    settings:",
            "      grace-period: 0s",
            "      secret-file: \(NotifyRecorder.directoryToken)/session-secret",
            "  - name: notification",
            "    type: notification",
            "    settings:",
            "      on: [didEnterBackground, didReceiveMemoryWarning.critical, reloadFailed, overran]",
            "      sinks: [journal]",
        ])

        /// Writes the secret with mode 0600 (session-lock refuses a file others can read).
        static func writeSecret(directory: String) throws {
            let path = directory + "/session-secret"
            try "integration-test-secret\n".write(toFile: path, atomically: false, encoding: .utf8)
            guard chmod(path, 0o600) == 0 else { throw HarnessError("chmod \(path): \(String(cString: strerror(errno)))") }
        }

        /// Today each transition sends two: `background · 4 services` and then
        /// `background · 4 services · session locked (entered background)`; on the way back
        /// `active · 4 services · session locked (entered background)` and then `active · 4 services`.
        @Test("one STATUS= per request with session-lock: background says session locked at once, foreground says unlocked at once")
        func oneStatusPerRequestWithSessionLock() async throws {
            try await NotifyRecorder.with(config: Self.config, prepare: Self.writeSecret) { daemon in
                try await daemon.waitFor("READY=1 (launched)") { $0.isReady }

                // To the background: the request's answer says background and locked.
                let backgroundSent = daemon.mark
                try daemon.send(SIGUSR1)
                try await daemon.waitFor("STATUS= background with the session locked", after: backgroundSent) {
                    $0.status?.hasPrefix("background") == true && $0.status?.contains("session locked") == true
                }

                // The sentinel: an explicit foreground. Requests are handled one after the other,
                // so everything the background request sent arrives before the foreground's first.
                let foregroundSent = daemon.mark
                try daemon.send(NotifyRecorder.realtime(2))
                let final = try await daemon.waitFor("STATUS= active with the session unlocked", after: foregroundSent) {
                    $0.status?.hasPrefix("active") == true && $0.status?.contains("session locked") == false
                }

                // The end marker: SIGTERM is handled after the foreground request, so any further
                // STATUS= of the foreground arrives before STOPPING=1.
                let stopSent = daemon.mark
                try daemon.send(SIGTERM)
                let stopping = try await daemon.waitFor("STOPPING=1", after: stopSent) { $0.isStopping }

                let background = daemon.datagrams(backgroundSent..<foregroundSent).filter { $0.status != nil }
                let foreground = daemon.datagrams(foregroundSent..<final.index + 1).filter { $0.status != nil }
                let trailing = daemon.datagrams(final.index + 1..<stopping.index).filter { $0.status != nil }
                print("IntegrationTests: STATUS= for SIGUSR1 (background): \(background.map { $0.status ?? "" })")
                print("IntegrationTests: STATUS= for SIGRTMIN+2 (foreground): \(foreground.map { $0.status ?? "" }) then before STOPPING=1: \(trailing.map { $0.status ?? "" })")

                #expect(background.count == 1, "the background request sent \(background.count) STATUS=\n\(daemon.diagnostics())")
                #expect(background.first?.status?.hasPrefix("background") == true && background.first?.status?.contains("session locked") == true,
                        "the background request's STATUS= does not say background and locked\n\(daemon.diagnostics())")
                #expect(foreground.count == 1, "the foreground request sent \(foreground.count) STATUS= up to its final one\n\(daemon.diagnostics())")
                #expect(trailing.isEmpty, "STATUS= after the foreground's final one: \(trailing)\n\(daemon.diagnostics())")
                #expect(try await daemon.waitForExit().status == 0, "\(daemon.diagnostics())")
            }
        }
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// Without a bus the daemon runs on: log control says once why it is off.
    @Suite(.enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare and the apphostd binary (reason printed)"))
    struct DaemonWithoutBusTests {
        static let config = "host:\n  state-directory: \(NotifyRecorder.stateToken)\nservices:\n  - logger\n"

        /// A shell line that starts the daemon on the harness's config, which it writes beside
        /// its notify socket, after `setup`, in a mount namespace of its own.
        static func program(after setup: String) throws -> (path: String, arguments: [String]?) {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let script = "\(setup) && exec \(binary) run --config \"$(dirname \"$NOTIFY_SOCKET\")/apphostd.yaml\""
            return ("/usr/bin/unshare", ["-m", "sh", "-c", script])
        }

        @Test("no bus to be had (no address, no bus socket): log control says so once, with sd_bus_open's error, and the daemon runs on")
        func noBusIsNamed() async throws {
            // The system bus's socket, should this machine have one, is hidden.
            let program = try Self.program(after: "{ [ ! -d /run/dbus ] || mount -t tmpfs tmpfs /run/dbus; }")
            try await NotifyRecorder.with(config: Self.config, program: program) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                // Another process's file: the harness's own polling, as for the probe log.
                try await daemon.waitUntil("log control says why it is off") { daemon.stderr.contains("log control unavailable") }
                let line = "log control unavailable (systemctl service-log-level cannot reach this daemon, nor apphostd status): no bus (sd_bus_open): No such file or directory"
                #expect(daemon.stderr.contains(line), "\(daemon.stderr)")
                try daemon.send(SIGTERM)
                #expect(try await daemon.waitForExit().status == 0, "\(daemon.stderr)")
                #expect(daemon.stderr.components(separatedBy: "log control unavailable").count == 2, "said more than once: \(daemon.stderr)")
            }
        }
    }
}

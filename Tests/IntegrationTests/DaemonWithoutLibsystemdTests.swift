import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// The daemon loads libsystemd only for sd-bus (log control, desktop notifications), on
    /// first use where a bus may be: elsewhere it never maps it, and without it the rest runs.
    @Suite(.enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare and the apphostd binary (reason printed)"))
    struct DaemonWithoutLibsystemdTests {
        static let config = "host:\n  state-directory: \(NotifyRecorder.stateToken)\nservices:\n  - logger\n"

        /// A shell line that starts the daemon on the harness's config, which it writes beside
        /// its notify socket, after `setup`, in a mount namespace of its own.
        static func program(after setup: String) throws -> (path: String, arguments: [String]?) {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let script = "\(setup) && exec \(binary) run --config \"$(dirname \"$NOTIFY_SOCKET\")/apphostd.yaml\""
            return ("/usr/bin/unshare", ["-m", "sh", "-c", script])
        }

        @Test("no bus to be had (no address, no bus socket): log control says so, and libsystemd is never mapped")
        func noBusLoadsNoLibsystemd() async throws {
            // The system bus's socket, should this machine have one, is hidden.
            let program = try Self.program(after: "{ [ ! -d /run/dbus ] || mount -t tmpfs tmpfs /run/dbus; }")
            try await NotifyRecorder.with(config: Self.config, program: program) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                // Another process's file: the harness's own polling, as for the probe log.
                try await daemon.waitUntil("log control says why it is off") { daemon.stderr.contains("log control unavailable") }
                let maps = try String(contentsOfFile: "/proc/\(daemon.pid)/maps", encoding: .utf8)
                #expect(!maps.contains("libsystemd"), "libsystemd is mapped")
                #expect(daemon.stderr.contains("log control unavailable (systemctl service-log-level cannot reach this daemon): no bus (sd_bus_open)"), "\(daemon.stderr)")
                try daemon.send(SIGTERM)
                #expect(try await daemon.waitForExit().status == 0, "\(daemon.stderr)")
            }
        }

        @Test("a bus address but libsystemd.so.0 unreadable: READY=1 all the same, log control says once that sd-bus cannot be loaded, SIGTERM ends it cleanly")
        func runsWithoutLibsystemd() async throws {
            let library = try #require(
                ["/lib/x86_64-linux-gnu/libsystemd.so.0", "/usr/lib/x86_64-linux-gnu/libsystemd.so.0", "/lib/aarch64-linux-gnu/libsystemd.so.0"]
                    .first { FileManager.default.fileExists(atPath: $0) },
                "no libsystemd.so.0 to hide"
            )
            let program = try Self.program(after: "mount --bind /dev/null \(library)")
            try await NotifyRecorder.with(config: Self.config, program: program, environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/run/apphostd-test-no-bus"]) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                try daemon.send(SIGTERM)
                let exit = try await daemon.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(daemon.stderr)")
                let log = daemon.stderr
                #expect(log.contains("log control unavailable (systemctl service-log-level cannot reach this daemon): sd-bus cannot be loaded: \(library)"), "\(log)")
                #expect(log.components(separatedBy: "sd-bus cannot be loaded").count == 2, "said more than once: \(log)")
            }
        }
    }
}

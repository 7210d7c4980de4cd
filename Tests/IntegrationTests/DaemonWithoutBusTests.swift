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
                try await daemon.waitUntil("logind's edge says why it is off") { daemon.stderr.contains("logind not followed") }
                try daemon.send(SIGTERM)
                #expect(try await daemon.waitForExit().status == 0, "\(daemon.stderr)")
                #expect(daemon.stderr.components(separatedBy: "log control unavailable").count == 2, "said more than once: \(daemon.stderr)")
                // logind too is said once, truly: not "followed" on the start line and then not.
                #expect(daemon.stderr.components(separatedBy: "logind not followed: no system bus").count == 2, "\(daemon.stderr)")
                #expect(!daemon.stderr.contains("followed (") && !daemon.stderr.contains("following logind"), "\(daemon.stderr)")
            }
        }

        @Test(
            "apphostd status and restart without a bus say which bus is missing and what to do, in words",
            .enabled(if: IntegrationEnvironment.apphostdBinary != nil, "needs the apphostd binary")
        )
        func statusWithoutABusSaysWhatToDo() async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let noSystemBus = ProcessRunner.environment(["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/system_bus_socket"])
            let system = try await ProcessRunner.run([binary, "status"], environment: noSystemBus)
            #expect(system.status == 69, "\(system)")
            #expect(system.stderr.hasPrefix("apphostd status: no system bus to reach the daemon on (No such file or directory): start D-Bus"), "\(system)")
            #expect(system.stderr.contains("add --user"), "\(system)")
            let restart = try await ProcessRunner.run([binary, "restart", "logger"], environment: noSystemBus)
            #expect(restart.status == 69 && restart.stderr.hasPrefix("apphostd restart: no system bus"), "\(restart)")

            // ProcessRunner's environment has neither $XDG_RUNTIME_DIR nor $DBUS_SESSION_BUS_ADDRESS.
            let user = try await ProcessRunner.run([binary, "status", "--user"])
            #expect(user.status == 69, "\(user)")
            #expect(user.stderr.contains("no user bus to reach the daemon on: neither $DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR is set"), "\(user)")
            #expect(!user.stderr.contains("No medium found") && !user.stderr.contains("add --user"), "\(user)")
        }
    }
}

import Foundation
import NotificationTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// The daemon speaks systemd's protocols itself (notify, journal, D-Bus): it never maps
    /// libsystemd, bus or no bus, and runs where there is none.
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

        static func libsystemd() throws -> String {
            try #require(
                ["/lib/x86_64-linux-gnu/libsystemd.so.0", "/usr/lib/x86_64-linux-gnu/libsystemd.so.0", "/lib/aarch64-linux-gnu/libsystemd.so.0"]
                    .first { FileManager.default.fileExists(atPath: $0) },
                "no libsystemd.so.0 to hide"
            )
        }

        @Test("no bus to be had (no address, no bus socket): log control names the socket it tried, once, and the daemon runs on")
        func noBusIsNamed() async throws {
            // The system bus's socket, should this machine have one, is hidden.
            let program = try Self.program(after: "{ [ ! -d /run/dbus ] || mount -t tmpfs tmpfs /run/dbus; }")
            try await NotifyRecorder.with(config: Self.config, program: program) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                // Another process's file: the harness's own polling, as for the probe log.
                try await daemon.waitUntil("log control says why it is off") { daemon.stderr.contains("log control unavailable") }
                let maps = try String(contentsOfFile: "/proc/\(daemon.pid)/maps", encoding: .utf8)
                #expect(!maps.contains("libsystemd"), "libsystemd is mapped")
                let line = "log control unavailable (systemctl service-log-level cannot reach this daemon): no bus at unix:path=/run/dbus/system_bus_socket: No such file or directory"
                #expect(daemon.stderr.contains(line), "\(daemon.stderr)")
                try daemon.send(SIGTERM)
                #expect(try await daemon.waitForExit().status == 0, "\(daemon.stderr)")
                #expect(daemon.stderr.components(separatedBy: "log control unavailable").count == 2, "said more than once: \(daemon.stderr)")
            }
        }

        @Test("libsystemd.so.0 unreadable and a bus: log control owns its name all the same, busctl reads and sets the level, and libsystemd is never mapped")
        func logControlNeedsNoLibsystemd() async throws {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl") else {
                try Test.cancel("needs dbus-daemon and busctl (Debian packages dbus-daemon, systemd)")
            }
            let library = try Self.libsystemd()
            let bus = try TestSessionBus.start()
            defer { bus.stop() }
            let program = try Self.program(after: "mount --bind /dev/null \(library)")
            try await NotifyRecorder.with(config: Self.config, program: program, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                let busctl = ["/usr/bin/busctl", "--address=\(bus.address)"]
                let property = ["org.apphost.apphostd", "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1", "LogLevel"]
                // The name is owned beside the launch: polled, as systemctl would find it.
                let owned = try await Poll.until(timeout: .seconds(15), interval: .milliseconds(20)) {
                    try await ProcessRunner.run(busctl + ["get-property"] + property).stdout.contains(#"s "info""#)
                }
                #expect(owned, "log control never owned org.apphost.apphostd\n\(daemon.stderr)")
                #expect(try await ProcessRunner.run(busctl + ["set-property"] + property + ["s", "debug"]).status == 0)
                #expect(try await ProcessRunner.run(busctl + ["get-property"] + property).stdout.contains(#"s "debug""#))
                let maps = try String(contentsOfFile: "/proc/\(daemon.pid)/maps", encoding: .utf8)
                #expect(!maps.contains("libsystemd"), "libsystemd is mapped")
                try daemon.send(SIGTERM)
                let exit = try await daemon.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(daemon.stderr)")
                #expect(!daemon.stderr.contains("log control unavailable"), "\(daemon.stderr)")
            }
        }
    }
}

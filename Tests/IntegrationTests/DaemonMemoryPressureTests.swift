import Foundation
import Testing

extension IntegrationSuites {
    /// Memory pressure through a FIFO in `$MEMORY_PRESSURE_WATCH` (systemd's protocol) and the trim
    /// request `SIGRTMIN+18`.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonMemoryPressureTests {
        @Test("a write to the MEMORY_PRESSURE_WATCH FIFO reaches every service as a warning; SIGRTMIN+18 as critical")
        func fifoAndTrimRequest() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("a"), ProbeSpec("b"), ProbeSpec("c")], unit: { unit, work in
                unit.environment["MEMORY_PRESSURE_WATCH"] = work + "/pressure.fifo"
            }) { daemon in
                let fifo = daemon.workDirectory + "/pressure.fifo"
                try #require(mkfifo(fifo, 0o600) == 0, "mkfifo failed: errno \(errno)")
                try await daemon.startOrFail()

                // Non-blocking: if the daemon does not hold the FIFO open, fail instead of hanging.
                let fd = open(fifo, O_WRONLY | O_NONBLOCK)
                if fd < 0 { throw HarnessError("the daemon does not read the FIFO (open: errno \(errno))\n\(await daemon.diagnostics())") }
                let written = "pressure\n".withCString { write(fd, $0, 9) }
                close(fd)
                try #require(written == 9)
                try await daemon.waitUntil("every probe recorded a memory warning") {
                    daemon.probeLog.instances(that: "didReceiveMemoryWarning.warning").count >= 3
                }
                var log = daemon.probeLog
                #expect(log.instances(that: "didReceiveMemoryWarning.warning") == ["a", "b", "c"], "\(log)")
                #expect(log.instances(that: "didReceiveMemoryWarning.critical").isEmpty, "\(log)")

                try await daemon.signal("SIGRTMIN+18")
                try await daemon.waitUntil("every probe recorded a critical memory warning") {
                    daemon.probeLog.instances(that: "didReceiveMemoryWarning.critical").count >= 3
                }
                log = daemon.probeLog
                #expect(log.instances(that: "didReceiveMemoryWarning.critical") == ["a", "b", "c"], "\(log)")
                // A memory warning is not a state change.
                #expect(try await daemon.stateWord() == "active")
            }
        }
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// One daemon per state directory.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the apphostd binary (reason printed)")
    )
    struct DaemonStateDirectoryLockTests {
        @Test("a second daemon on the same state directory exits 75 naming the directory and the first one's PID; the first runs on and exits 0")
        func secondDaemonOnOneStateDirectoryIsRefused() async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let config = NotifyRecorder.configText(services: ["  - logger"])
            try await NotifyRecorder.with(config: config) { first in
                try await first.waitFor("READY=1 (launched)") { $0.isReady }
                let second = try await ProcessRunner.run(
                    [binary, "run", "--config", first.directory + "/apphostd.yaml"],
                    environment: ProcessRunner.environment(["MEMORY_PRESSURE_WATCH": "/dev/null"]),
                    timeout: .seconds(20)
                )
                #expect(second.status == 75, "\(second)")
                #expect(second.stderr.contains("state directory \(first.directory)/state is in use by process \(first.pid)"), "\(second)")
                let lock = try String(contentsOfFile: first.directory + "/state/lock", encoding: .utf8)
                #expect(lock == "\(first.pid)\n")

                try first.send(SIGTERM)
                let exit = try await first.waitForExit()
                #expect(exit.status == 0, "\(first.diagnostics())")
            }
        }
    }
}

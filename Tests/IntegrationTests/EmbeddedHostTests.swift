import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationEnvironment {
    /// The example program that embeds the host in its own `ServiceGroup` (Examples/EmbeddedHost),
    /// built next to apphostd.
    static var embeddingExampleBinary: String? {
        guard let apphostd = apphostdBinary else { return nil }
        let candidate = URL(fileURLWithPath: apphostd).deletingLastPathComponent().appendingPathComponent("apphost-embedding-example").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }
}

extension IntegrationSuites {
    /// A host embedded in a program's own `ServiceGroup` with the signal service gets the whole
    /// signal map, as apphostd does.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.embeddingExampleBinary != nil, "needs apphost-embedding-example built next to apphostd")
    )
    struct EmbeddedHostTests {
        @Test("an embedded host with the signal service: SIGUSR1 goes to the background, SIGRTMIN+2 to the foreground, SIGTERM terminates and the program exits 0")
        func embeddedHostFollowsTheSignalMap() async throws {
            let binary = try #require(IntegrationEnvironment.embeddingExampleBinary)
            try await NotifyRecorder.with(config: "", program: (binary, [])) { program in
                try await program.waitFor("READY=1") { $0.has("READY", "1") }
                try program.send(SIGUSR1)
                try await program.waitFor("background") { $0.status?.hasPrefix("background") == true }
                try program.send(NotifyRecorder.realtime(2))
                try await program.waitFor("active again") { $0.status?.hasPrefix("active") == true && $0.fields["READY"] == nil }
                try program.send(SIGTERM)
                try await program.waitFor("STOPPING=1") { $0.has("STOPPING", "1") }
                let exit = try await program.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(program.diagnostics())")
            }
        }
    }
}

import Foundation
import Testing

extension IntegrationSuites {
    /// What the built daemon loads (issue 12): no Foundation, no ICU, whatever a dependency
    /// imports. The debug build links Swift's libraries dynamically, so `ldd` shows them all.
    @Suite(.enabled(if: IntegrationEnvironment.canRunDaemonDirectly, "needs the apphostd binary (reason printed)"))
    struct ApphostdLinkageTests {
        static let forbidden = ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so", "libicu"]

        @Test("apphostd links neither Foundation, FoundationInternationalization nor ICU")
        func noFoundationInTheBinary() async throws {
            let binary = try #require(IntegrationEnvironment.apphostdBinary)
            let result = try await ProcessRunner.run(["ldd", binary])
            #expect(result.succeeded, "\(result)")
            #expect(result.stdout.contains("libswiftCore.so") || result.stdout.contains("statically linked") || result.stdout.contains("libc.so"), "ldd listed the libraries: \(result)")
            let loaded = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let offending = loaded.filter { line in Self.forbidden.contains { line.hasPrefix($0) } }
            #expect(offending.isEmpty, "apphostd loads \(offending)")
        }
    }
}

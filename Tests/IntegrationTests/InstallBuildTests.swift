import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// The daemon as deploy/INSTALL.md builds and installs it: release, the Swift runtime linked
    /// in, stripped by `install -s`. The release build links with flags of its own (Package.swift),
    /// which the debug build the other tests run never sees.
    @Suite(.serialized, .buildsPackages)
    struct InstallBuildTests {
        @Test("the installed binary is at most 16 MB, loads no Foundation, links no regex engine, loads no libsystemd at start, has its relocations packed and only its imports in the dynamic symbol table, and runs the shipped services to READY=1 and a clean stop")
        func installedBinaryRuns() async throws {
            let built = try await ReleaseBuild.apphostd()

            // The regex engine (`_StringProcessing`, `_RegexParser`) costs every instance 40 KiB
            // of relocated data and a megabyte of text; one `String.contains` pulls it in.
            let linked = try await ProcessRunner.run(["nm", built])
            try #require(linked.succeeded, "\(linked)")
            let regex = linked.stdout.split(separator: "\n").filter { $0.contains("17_StringProcessing") || $0.contains("12_RegexParser") }
            #expect(regex.isEmpty, "the release build links the regex engine (\(regex.count) symbols): a String.contains, split(separator: String) or Regex in Sources pulls it in; `-Xlinker --why-extract=why.txt` names the file")

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apphostd-install-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let installed = directory + "/apphostd"
            let install = try await ProcessRunner.run(["install", "-s", "-m", "0755", built, installed])
            try #require(install.succeeded, "\(install)")

            let size = try #require(try FileManager.default.attributesOfItem(atPath: installed)[.size] as? Int)
            #expect(size <= 16_000_000, "installed binary is \(size) bytes")

            let dynamic = try await ProcessRunner.run(["readelf", "-d", "-W", installed])
            #expect(dynamic.stdout.contains("(RELR)"), "relative relocations are not packed (lld's -z pack-relative-relocs): \(dynamic)")
            let symbols = try await ProcessRunner.run(["readelf", "--dyn-syms", "-W", installed])
            let exported = symbols.stdout.split(separator: "\n").filter { $0.contains(" GLOBAL ") && !$0.contains(" UND ") }
            #expect(exported.count < 100, "the dynamic symbol table exports \(exported.count) of the daemon's own symbols (--no-export-dynamic)")

            let libraries = try await ProcessRunner.run(["ldd", installed])
            #expect(libraries.succeeded, "\(libraries)")
            for forbidden in ApphostdLinkageTests.forbidden + ["libswiftCore.so"] {
                #expect(!libraries.stdout.contains(forbidden), "the installed binary loads \(forbidden): \(libraries)")
            }
            // libsystemd and its six libraries cost every start about 0.5 ms and every instance
            // 124 KiB: sd-bus loads it where a bus is used, nothing else needs it.
            for library in ["libsystemd.so", "libgcrypt.so"] {
                #expect(!libraries.stdout.contains(library), "the installed binary loads \(library) at start: \(libraries)")
            }

            try await NotifyRecorder.with(config: DaemonStatusPerRequestTests.config, program: (installed, nil), prepare: DaemonStatusPerRequestTests.writeSecret) { daemon in
                try await daemon.waitFor("READY=1") { $0.isReady }
                try await daemon.waitFor("STATUS= with the four services") { $0.status?.hasPrefix("active · 4 services") == true }
                try daemon.send(SIGTERM)
                let exit = try await daemon.waitForExit()
                #expect(exit.status == 0, "\(exit)\n\(daemon.diagnostics())")
            }
        }
    }
}

import AppHostTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension IntegrationSuites {
    /// The daemon as deploy/INSTALL.md builds and installs it: `scripts/build-release.sh`'s
    /// dynamically linked PIE with the Swift runtime inside, stripped by `install -s`. The release build links with flags of its own (Package.swift,
    /// the script), which the debug build the other tests run never sees.
    @Suite(.serialized, .buildsPackages)
    struct InstallBuildTests {
        @Test("the installed binary is a PIE of at most 16 MB that needs only the C and C++ runtime, libsystemd.so.0 and libyaml (no rpath), links neither Foundation nor the regex engine, has its relocations packed and none of its own symbols in the dynamic symbol table, and runs the shipped services to READY=1 and a clean stop")
        func installedBinaryRuns() async throws {
            let built = try await ReleaseBuild.apphostd()

            // The regex engine (`_StringProcessing`, `_RegexParser`) costs every instance 40 KiB
            // of relocated data and a megabyte of text; one `String.contains` pulls it in.
            let linked = try await ProcessRunner.run(["nm", built])
            try #require(linked.succeeded, "\(linked)")
            let regex = linked.stdout.split(separator: "\n").filter { $0.contains("17_StringProcessing") || $0.contains("12_RegexParser") }
            #expect(regex.isEmpty, "the release build links the regex engine (\(regex.count) symbols): a String.contains, split(separator: String) or Regex in Sources pulls it in; `-Xlinker --why-extract=why.txt` names the file")
            let foundation = linked.stdout.split(separator: "\n").filter { $0.contains("10Foundation") || $0.contains("20FoundationEssentials") }
            #expect(foundation.isEmpty, "the release build links Foundation (\(foundation.count) symbols)")

            let directory = try makeTemporaryDirectory("apphostd-install")
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

            // A PIE whose libraries are the distribution's: the C and C++ runtime, libsystemd
            // and libyaml; the Swift runtime is inside (no Foundation, no ICU), and no rpath.
            let headers = try await ProcessRunner.run(["readelf", "-h", "-W", installed])
            #expect(headers.stdout.contains("DYN (Position-Independent Executable file)"), "not a PIE: \(headers)")
            let lines = dynamic.stdout.split(separator: "\n")
            let needed = lines.filter { $0.contains("(NEEDED)") }.compactMap { line in
                line.split(separator: "[").last.map { String($0.dropLast()) }
            }
            #expect(needed.contains("libsystemd.so.0"), "libsystemd.so.0 is not NEEDED: \(needed)")
            let allowed = ["libsystemd.so.0", "libyaml-0.so.2", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2", "libpthread.so.0", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"]
            let unexpected = needed.filter { !allowed.contains($0) }
            #expect(unexpected.isEmpty, "the binary needs libraries beyond the C and C++ runtime, libsystemd and libyaml: \(unexpected)")
            let paths = lines.filter { $0.contains("(RUNPATH)") || $0.contains("(RPATH)") }
            #expect(paths.isEmpty, "the binary carries an rpath: \(paths)")

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

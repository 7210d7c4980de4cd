import AppHostTestSupport
import Foundation
import Testing

extension IntegrationSuites {
    /// The Debian package (issue 51), as an operator gets it: `scripts/build-deb.sh` over the
    /// release build, lintian-clean, then installed with apt, upgraded, removed and purged in a
    /// booted Debian root with nothing of apphostd's in it, under systemd 252 (and 257 in
    /// scripts/test.sh's trixie pass: the package built here installs there too).
    @Suite(
        .serialized, .needsSystemManager,
        .disabled(if: DebianPackage.problem != nil, Comment(rawValue: DebianPackage.problem ?? ""))
    )
    struct DebianPackageTests {
        typealias Support = IntegrationSuites.SystemManagerTests
        static let unit = "apphostd.service"

        @Test("lintian --pedantic: no error, warning, info or pedantic tag but the overrides, each with its reason")
        func lintianFindsNothing() async throws {
            let changes = try await DebianPackage.changes()
            let debug = try await ProcessRunner.run(["dpkg-deb", "-c", try await DebianPackage.deb(prefix: "apphostd-dbgsym_")])
            #expect(debug.succeeded && debug.stdout.contains("/usr/lib/debug/.build-id/"), "the -dbgsym package from dh_strip: \(debug)")
            let result = try await ProcessRunner.run(
                ["lintian", "--pedantic", "--display-experimental", "--info", "--tag-display-limit", "0", "--fail-on", "error,warning,info,pedantic", changes], timeout: .seconds(600)
            )
            #expect(result.succeeded, "\(result)")
            let tags = result.stdout.split(separator: "\n").filter { $0.count > 2 && "EWIPX".contains($0.first!) && $0.dropFirst().hasPrefix(": ") }
            #expect(tags.isEmpty, "\(tags.joined(separator: "\n"))")
        }

        @Test("apt-get install: enabled, active as the user apphostd, its man pages; an upgrade keeps the unflushed events and the edited conffile; remove keeps config and state; purge leaves nothing; install.sh's leftovers are named")
        func installUpgradeRemovePurge() async throws {
            let deb = try await DebianPackage.deb()
            let newer = try await DebianPackage.newerVersion(of: deb)
            try await SystemManager.with(installsWithScript: false) { system in
                try FileManager.default.copyItem(atPath: deb, toPath: system.root + "/srv/apphostd.deb")
                try FileManager.default.copyItem(atPath: newer.path, toPath: system.root + "/srv/apphostd-newer.deb")
                let before = try await Self.apphostdPaths(system)

                try await Self.freshInstall(system)
                try await Self.upgrade(system, to: newer.version)
                let owned = try await Self.removeKeepsConfigAndState(system)

                let purge = try await Self.apt(system, "purge", "apphostd")
                #expect(purge.succeeded, "\(purge)")
                let after = try await Self.apphostdPaths(system)
                #expect(after == before, "paths named *apphost* under /etc, /var/lib, /run and /usr: before the install \(before), after the purge \(after)")
                for path in owned where FileManager.default.fileExists(atPath: system.root + path) {
                    var isDirectory: ObjCBool = false
                    _ = FileManager.default.fileExists(atPath: system.root + path, isDirectory: &isDirectory)
                    #expect(isDirectory.boolValue, "\(path), from dpkg -L, is still there after the purge")
                }
                #expect(try await system.run(["getent", "passwd", "apphostd"]).succeeded, "the system user stays (Debian policy)")

                try await Self.leftoversOfInstallScriptAreNamed(system)
            }
        }
    }
}

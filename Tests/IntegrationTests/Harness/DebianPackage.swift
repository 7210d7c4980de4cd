import Foundation
import Synchronization

/// The Debian package as an operator gets it: `scripts/build-deb.sh` over the release build
/// (`ReleaseBuild`), once per test run.
enum DebianPackage {
    static let output = ReleaseBuild.repository + "/.build-deb"

    private static let build = Mutex<Task<CommandResult, any Error>?>(nil)

    /// Why the package cannot be built here (debhelper, lintian or scdoc missing), or nil.
    static var problem: String? {
        for tool in ["dpkg-buildpackage", "dh", "lintian", "scdoc"] where ProcessRunner.resolve(tool) == nil {
            return "\(tool) not found (bash scripts/deps.sh test installs debhelper, lintian and scdoc)"
        }
        return nil
    }

    /// Builds the package once per test run; returns the `.changes` file's path (the `.deb`s are
    /// beside it).
    static func changes() async throws -> String {
        let binary = try await ReleaseBuild.apphostd()
        let task = build.withLock { task in
            if let task { return task }
            let started = Task {
                try await ProcessRunner.run(
                    ["/bin/bash", ReleaseBuild.repository + "/scripts/build-deb.sh", output],
                    environment: ProcessRunner.environment(["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "", "APPHOSTD_BINARY": binary]),
                    timeout: .seconds(600)
                )
            }
            task = started
            return started
        }
        let result = try await task.value
        guard result.succeeded else { throw HarnessError("scripts/build-deb.sh failed: \(result)") }
        let files = try FileManager.default.contentsOfDirectory(atPath: output)
        guard let changes = files.filter({ $0.hasSuffix(".changes") }).sorted().last else { throw HarnessError("no .changes in \(output): \(files)") }
        return output + "/" + changes
    }

    /// The package's `.deb` (`apphostd_…`), or its -dbgsym's (`apphostd-dbgsym_`).
    static func deb(prefix: String = "apphostd_") async throws -> String {
        let changes = try await changes()
        let files = try FileManager.default.contentsOfDirectory(atPath: output)
        guard let deb = files.first(where: { $0.hasPrefix(prefix) && $0.hasSuffix(".deb") }) else { throw HarnessError("no \(prefix)*.deb beside \(changes): \(files)") }
        return output + "/" + deb
    }
}

extension DebianPackage {
    /// The package again as a newer version (`VERSION+1`), made from `deb` with dpkg-deb, with a
    /// line added to its conffile (md5sums does not list conffiles), so that an operator's edit
    /// meets a changed file: what an upgrade test needs, without a second release build.
    static func newerVersion(of deb: String) async throws -> (path: String, version: String) {
        let work = output + "/newer"
        try? FileManager.default.removeItem(atPath: work)
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let tree = work + "/tree"
        let unpack = try await ProcessRunner.run(["dpkg-deb", "-R", deb, tree])
        guard unpack.succeeded else { throw HarnessError("dpkg-deb -R failed: \(unpack)") }
        let control = try String(contentsOfFile: tree + "/DEBIAN/control", encoding: .utf8)
        guard let line = control.split(separator: "\n").first(where: { $0.hasPrefix("Version: ") }) else { throw HarnessError("no Version in \(control)") }
        let version = line.dropFirst("Version: ".count) + "+1"
        try control.replacingOccurrences(of: String(line), with: "Version: \(version)").write(toFile: tree + "/DEBIAN/control", atomically: true, encoding: .utf8)
        let conffile = tree + "/etc/apphostd/apphostd.yaml"
        let config = try String(contentsOfFile: conffile, encoding: .utf8)
        try (config + "# \(version)\n").write(toFile: conffile, atomically: true, encoding: .utf8)
        let path = work + "/apphostd_\(version).deb"
        let build = try await ProcessRunner.run(["dpkg-deb", "--root-owner-group", "-b", tree, path], timeout: .seconds(120))
        guard build.succeeded else { throw HarnessError("dpkg-deb -b failed: \(build)") }
        return (path, String(version))
    }
}

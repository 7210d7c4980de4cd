import AppHostTestSupport
import Foundation
import Testing

// The steps of `installUpgradeRemovePurge`, each on the booted root.
extension IntegrationSuites.DebianPackageTests {
    /// `apt-get -y ARGS` inside, non-interactive, keeping an edited conffile.
    static func apt(_ system: SystemManager, _ arguments: String...) async throws -> CommandResult {
        try await system.run(
            ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-y", "-o", "Dpkg::Options::=--force-confold"] + arguments, timeout: .seconds(300))
    }

    /// Every path under /etc, /var/lib, /run and /usr whose name holds "apphost".
    static func apphostdPaths(_ system: SystemManager) async throws -> [String] {
        let result = try await system.run(["find", "/etc", "/var/lib", "/run", "/usr", "-name", "*apphost*"])
        return result.stdout.split(separator: "\n").map(String.init).sorted()
    }

    /// The package from the root's apt (every dependency is there; the root has no network).
    static func freshInstall(_ system: SystemManager) async throws {
        let install = try await apt(system, "install", "/srv/apphostd.deb")
        #expect(install.succeeded, "\(install)")
        #expect(!install.stderr.contains("install.sh"), "no leftover of install.sh named on a clean root: \(install.stderr)")
        try await Support.waitForStatus(system, "active after apt-get install", Support.isActiveAndForeground)
        #expect(try await system.systemctl("is-enabled", unit).stdout == "enabled\n")
        #expect(try await system.run(["getent", "passwd", "apphostd"]).succeeded, "the system user, from sysusers")
        #expect(try await system.show(unit, ["User"])["User"] == "apphostd")
        let status = try await system.systemctl("status", unit)
        #expect(status.stdout.contains("Status: \"active · 4 services"), "systemctl status: \(status)")
        let secret = try await system.run(["stat", "-c", "%a %U %s", "/etc/apphostd/session-secret"])
        #expect(secret.stdout == "600 root 32\n", "\(secret)")
        let answer = try await system.run(["apphostd", "status"])
        let journal = answer.succeeded ? "" : await system.journalText(unit: unit)
        #expect(answer.succeeded && answer.stdout.contains("active"), "apphostd status over the system bus: \(answer)\n\(journal)")
        let unitFile = try system.read("/lib/systemd/system/apphostd.service")
        #expect(unitFile.contains("ExecStart=/usr/bin/apphostd run --config /etc/apphostd/apphostd.yaml"))
        #expect(unitFile.contains("Documentation=man:apphostd(8) man:apphostd.yaml(5)"))
        for (page, heading) in [("apphostd", "SIGNALS"), ("apphostd.yaml", "host.hook-deadline")] {
            let man = try await system.run(["env", "MANPAGER=cat", "MANWIDTH=100", "man", page])
            #expect(man.succeeded && man.stdout.contains(heading), "man \(page) renders: \(man)")
        }
        for path in ["/usr/share/bash-completion/completions/apphostd", "/usr/share/dbus-1/system.d/org.apphost.apphostd.conf",
                     "/usr/share/dbus-1/interfaces/org.apphost.Host1.xml"] {
            #expect(FileManager.default.fileExists(atPath: system.root + path), "\(path) installed")
        }
    }

    /// A background and a foreground whose analytics events wait in memory (the flush interval
    /// is a minute), an edited conffile, then `apt-get install` of a newer version: the unit
    /// restarts on the new binary, the events are counted, the edit stays.
    static func upgrade(_ system: SystemManager, to version: String) async throws {
        let baseline = try await analytics(system)
        try await system.systemctl("kill", "-s", "SIGUSR1", unit)
        try await Support.waitForStatus(system, "the background", Support.isBackgroundAndLocked)
        try await system.systemctl("kill", "-s", "SIGUSR1", unit)
        try await Support.waitForStatus(system, "the foreground", Support.isActiveAndForeground)
        let waiting = try await analytics(system)
        #expect(waiting.foregroundEntries == baseline.foregroundEntries, "the foreground's event is not yet on disk: \(waiting)")
        let config = try system.read("/etc/apphostd/apphostd.yaml")
        let edited = config.replacingOccurrences(of: "hook-deadline: 5s", with: "hook-deadline: 6s")
        #expect(edited != config)
        try system.write(edited, to: "/etc/apphostd/apphostd.yaml")
        let pid = try await system.show(unit, ["MainPID"])["MainPID"]

        let upgrade = try await apt(system, "install", "/srv/apphostd-newer.deb")
        #expect(upgrade.succeeded, "\(upgrade)")
        let installed = try await system.run(["dpkg-query", "-W", "-f", "${Version}", "apphostd"])
        #expect(installed.stdout == version, "\(installed)")
        let status = try await Support.waitForStatus(system, "active after the upgrade", Support.isActiveAndForeground)
        #expect(status["MainPID"] != pid, "restarted")
        let exe = try await system.run(["readlink", "/proc/\(status["MainPID"] ?? "0")/exe"])
        #expect(exe.stdout == "/usr/bin/apphostd\n", "the new binary runs, not the replaced one: \(exe)")
        #expect(try system.read("/etc/apphostd/apphostd.yaml") == edited, "the operator's edit stays (--force-confold)")
        #expect(FileManager.default.fileExists(atPath: system.root + "/etc/apphostd/apphostd.yaml.dpkg-dist"), "the package's new conffile beside it")
        let after = try await analytics(system)
        #expect(after.backgroundEntries == baseline.backgroundEntries + 1 && after.foregroundEntries == baseline.foregroundEntries + 1, "no event lost: before \(baseline), after \(after)")
        #expect(after.launches == baseline.launches + 1, "\(after)")
    }

    /// `apt-get remove`: the unit stopped, the config, the secret and the state kept. Returns
    /// what `dpkg -L` listed before.
    static func removeKeepsConfigAndState(_ system: SystemManager) async throws -> [String] {
        let listed = try await system.run(["dpkg", "-L", "apphostd"])
        #expect(listed.succeeded, "\(listed)")
        let remove = try await apt(system, "remove", "apphostd")
        #expect(remove.succeeded, "\(remove)")
        #expect(try await system.systemctl("is-active", unit).stdout != "active\n", "stopped")
        for path in ["/etc/apphostd/apphostd.yaml", "/etc/apphostd/session-secret", "/var/lib/apphostd/analytics"] {
            #expect(FileManager.default.fileExists(atPath: system.root + path), "\(path) kept by apt-get remove")
        }
        return listed.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("/") }
    }

    /// deploy/install.sh's files, then the package: its preinst names each and what shadows what.
    static func leftoversOfInstallScriptAreNamed(_ system: SystemManager) async throws {
        let binary = try await ReleaseBuild.apphostd()
        let script = try await ProcessRunner.run(["bash", ReleaseBuild.repository + "/deploy/install.sh", binary, system.root], timeout: .seconds(120))
        #expect(script.succeeded, "\(script)")
        let install = try await apt(system, "install", "/srv/apphostd.deb")
        #expect(install.succeeded, "\(install)")
        let output = install.stdout + install.stderr
        for path in ["/etc/systemd/system/apphostd.service", "/usr/local/bin/apphostd", "/etc/dbus-1/system.d/org.apphost.apphostd.conf"] {
            #expect(output.contains(path), "\(path) named: \(output)")
        }
        #expect(output.contains("shadows the package's unit"), "\(output)")
    }

    static func analytics(_ system: SystemManager) async throws -> AnalyticsCounts {
        let result = try await system.run(["apphostd", "analytics", "--json", "--state-directory", "/var/lib/apphostd"])
        guard result.succeeded else { throw HarnessError("apphostd analytics failed: \(result)") }
        return try AnalyticsCounts.decode(result.stdout)
    }
}

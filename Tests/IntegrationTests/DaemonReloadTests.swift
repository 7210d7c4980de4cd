import Foundation
import Testing

extension IntegrationSuites {
    /// `systemctl reload` (SIGHUP): a good config is applied as a diff, a broken one is refused
    /// while the old one keeps running.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonReloadTests {
        @Test("reload with a good config adds a service (launched into the active state) and removes one")
        func reloadAddsAndRemovesWhileActive() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("probe"), ProbeSpec("leaving")]) { daemon in
                try await daemon.startOrFail()
                try daemon.writeConfig(services: [ProbeSpec("probe"), ProbeSpec("probe2")])
                let reload = try await daemon.reload()
                #expect(reload.succeeded, "\(reload)")
                try await daemon.waitUntil("probe2 caught up and leaving terminated") {
                    let log = daemon.probeLog
                    return log.contains("probe2", "didBecomeActive") && log.contains("leaving", "willTerminate")
                }
                try await daemon.waitUntil("StatusText counts 2 services again") {
                    try await daemon.status()["StatusText"]?.hasPrefix("active · 2 services") == true
                }
                let log = daemon.probeLog
                #expect(log.events(of: "probe2") == ["willFinishLaunching", "didFinishLaunching", "didBecomeActive"], "\(log)")
                #expect(log.events(of: "leaving").last == "willTerminate", "\(log)")
                // The unchanged service is left alone.
                #expect(log.count("probe", "willFinishLaunching") == 1 && !log.contains("probe", "willTerminate"), "\(log)")
                let status = try await daemon.status()
                #expect(status["ActiveState"] == "active", "\(status)")
                #expect(status["StatusText"]?.contains("reload failed") == false, "\(status)")
            }
        }

        @Test("a service added while in the background is brought to the background state")
        func reloadCatchesUpToBackground() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("probe")]) { daemon in
                try await daemon.startOrFail()
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try daemon.writeConfig(services: [ProbeSpec("probe"), ProbeSpec("late")])
                let reload = try await daemon.reload()
                #expect(reload.succeeded, "\(reload)")
                try await daemon.waitUntil("late caught up to background") {
                    daemon.probeLog.contains("late", "didEnterBackground")
                }
                let log = daemon.probeLog
                #expect(log.events(of: "late") == ["willFinishLaunching", "didFinishLaunching", "didEnterBackground"], "\(log)")
                #expect(log.violations(of: "late").isEmpty, "\(log.violations(of: "late"))")
                #expect(try await daemon.stateWord() == "background")
            }
        }

        @Test("reload with a broken config keeps the old one running, says so in StatusText and names file and key in the journal")
        func brokenReloadKeepsRunning() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("probe")]) { daemon in
                try await daemon.startOrFail()
                let pid = try await daemon.mainPID()
                let good = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
                // An unknown host key on a known line, and a new service that must not launch.
                let broken = good.replacingOccurrences(of: "host:\n", with: "host:\n  bogus-key: 1\n")
                    + ProbeSpec("never").yaml(recordTo: daemon.probeLogPath) + "\n"
                try #require(broken != good)
                try daemon.writeConfig(text: broken)
                // ExecReload= (apphostd reload) waits for the daemon's answer: a refused config
                // fails `systemctl reload`.
                let reload = try await daemon.reload()
                #expect(!reload.succeeded, "systemctl reload succeeded for a config the daemon refused: \(reload)")
                try await daemon.waitUntil("StatusText reports the failed reload") {
                    try await daemon.status()["StatusText"]?.contains("reload failed") == true
                }
                let status = try await daemon.status()
                #expect(status["ActiveState"] == "active", "\(status)")
                #expect(DaemonUnderTest.stateWord(of: status["StatusText"] ?? "") == "active", "\(status)")
                #expect(try await daemon.mainPID() == pid, "the daemon restarted")
                let log = daemon.probeLog
                #expect(!log.contains("probe", "willTerminate") && log.events(of: "never").isEmpty, "the broken config was applied: \(log)")

                try await daemon.waitUntil("the journal has an error naming the file and the key") {
                    try await daemon.journal().contains { record in
                        let message = record["MESSAGE"] ?? ""
                        return message.contains(daemon.configPath) && message.contains("bogus-key")
                            && (Int(record["PRIORITY"] ?? "") ?? 7) <= 3
                    }
                }

                // Fixed again: the next reload clears the remark and applies the file.
                try daemon.writeConfig(text: good)
                _ = try await daemon.reload()
                try await daemon.waitUntil("the remark is cleared after a good reload") {
                    try await daemon.status()["StatusText"]?.contains("reload failed") == false
                }
            }
        }
    }
}

import CSystemd
import Foundation
import Synchronization
import AppHostTestKit
import DBusTestSupport
import Testing

extension IntegrationSuites {
    /// The five built-in services (logger, analytics, session-lock, notification, exec) together in
    /// one real `apphostd` under systemd: launch → background → foreground → memory warning → reload
    /// → stop, and each service's effect as an operator sees it — structured journal records, the
    /// `apphostd analytics --json` report, the lock state in StatusText and the journal, journal
    /// notifications with their `MESSAGE_ID`, freedesktop notifications received by a notification
    /// server on the sandbox's session bus, and the files an exec plug-in wrote. Also: a missing or
    /// loosely permitted secret keeps the session locked and says so without crashing, and no
    /// secret ever reaches the journal.
    ///
    /// The sandbox's user manager cannot hand out `LoadCredential=` credentials (systemd 252 as a
    /// per-user manager leaves `$CREDENTIALS_DIRECTORY` empty here), so the unit gets
    /// `CREDENTIALS_DIRECTORY=` pointing at a 0700 directory with a 0600 file, which is what the
    /// daemon sees under a real `LoadCredential=`.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonBuiltinServicesTests {
        /// journald `MESSAGE_ID`s of the notification service (LocalNotification.Kind.messageID).
        enum MessageID {
            static let lifecycle = "5ec9bd10d6384f64abf43a3618b12c4c"
            static let memoryWarning = "160acf6b8b004a1c9b595bd72e847940"
            static let sessionLocked = "273ba9bfc45d40bb829c0361975ade64"
            static let sessionUnlocked = "fdb1651a4f1f46d6be1e9419f70e5bc0"
        }

        @Test("all five built-in services through launch, background, foreground, memory warning, reload and stop")
        func allFiveServices() async throws {
            let secret = "it-secret-\(UUID().uuidString)"
            try await DaemonUnderTest.with(services: [], unit: { unit, work in
                unit.environment["CREDENTIALS_DIRECTORY"] = work + "/credentials"
            }) { daemon in
                let work = daemon.workDirectory
                try Self.writeCredential(directory: work + "/credentials", secret: secret)
                try Self.writePlugin(work: work)
                let notifyOn = ["didEnterBackground", "didReceiveMemoryWarning.critical", "sessionLocked", "sessionUnlocked", "reloadFailed"]
                let sessionLock = ["credential: session-secret"]
                try daemon.writeConfig(text: Self.config(work: work, loggerLevel: "info", sessionLock: sessionLock, notificationOn: notifyOn))
                let server = try await TestNotificationServer.start(address: daemon.sandbox.busAddress)

                // Launch.
                try await daemon.startOrFail()
                let launched = try await daemon.status()["StatusText"] ?? ""
                #expect(launched.hasPrefix("active · 5 services"), "StatusText: \(launched)")
                let active = try await Self.waitForRecord(daemon, "the logger's didBecomeActive record") {
                    $0["SERVICE"] == "logger" && $0["EVENT"] == "didBecomeActive"
                }
                let activeText = active.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
                #expect(active["FROM_STATE"] == "launching" && active["TO_STATE"] == "active", "\(activeText)")
                #expect(active["SERVICE_COUNT"] == "5", "\(activeText)")
                #expect(active["DURATION_US"].flatMap(Int.init) != nil, "\(activeText)")
                #expect(active["PRIORITY"] == "6", "level info: \(activeText)")
                #expect(active["_TRANSPORT"] == "journal", "\(activeText)")

                // Background: the session locks and protected data goes away.
                try await daemon.signal("SIGUSR1")
                try await daemon.waitForState("background")
                try await daemon.waitUntil("StatusText says the session is locked") {
                    try await daemon.status()["StatusText"]?.contains("session locked (entered background)") == true
                }
                try await Self.waitForRecord(daemon, "session-lock logged the lock") {
                    $0["SERVICE"] == "session-lock" && $0["MESSAGE"] == "session locked: entered background"
                }
                let background = try await Self.waitForRecord(daemon, "the logger's didEnterBackground record") {
                    $0["SERVICE"] == "logger" && $0["EVENT"] == "didEnterBackground"
                }
                #expect(background["FROM_STATE"] == "inactive" && background["TO_STATE"] == "background", "\(background)")
                try await Self.waitForRecord(daemon, "the logger's protectedDataWillBecomeUnavailable record") {
                    $0["SERVICE"] == "logger" && $0["EVENT"] == "protectedDataWillBecomeUnavailable"
                }
                // The lock notification is redacted, as on a lock screen.
                let lockedNote = try await Self.waitForRecord(daemon, "the sessionLocked notification in the journal") {
                    $0["MESSAGE_ID"] == MessageID.sessionLocked
                }
                #expect(lockedNote["NOTIFICATION_REDACTED"] == "true", "\(lockedNote)")
                #expect(lockedNote["NOTIFICATION_BODY"] == "1 new notification", "\(lockedNote)")
                #expect(lockedNote["MESSAGE"]?.contains("\(Self.appName) locked the session") == false, "\(lockedNote)")
                let backgroundNote = try await Self.waitForRecord(daemon, "the didEnterBackground notification in the journal") {
                    $0["MESSAGE_ID"] == MessageID.lifecycle
                }
                #expect(backgroundNote["SERVICE"] == "notification" && backgroundNote["PRIORITY"] == "5", "\(backgroundNote)")
                // Whether it is redacted depends on whether the lock came first; either way it is one of the two forms.
                #expect(backgroundNote["NOTIFICATION_TITLE"] == "Moved to the background" || backgroundNote["NOTIFICATION_REDACTED"] == "true", "\(backgroundNote)")
                // Analytics flushed on didEnterBackground: the report already has it.
                let afterBackground = try await AnalyticsCounts.read(stateDirectory: daemon.stateDirectory)
                #expect(afterBackground.launches == 1 && afterBackground.backgroundEntries == 1, "\(afterBackground)")

                // Foreground: the secret is read again and the session unlocks.
                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                try await daemon.waitUntil("StatusText no longer says locked") {
                    try await daemon.status()["StatusText"]?.contains("session locked") == false
                }
                try await Self.waitForRecord(daemon, "session-lock logged the unlock") {
                    $0["SERVICE"] == "session-lock" && $0["MESSAGE"] == "session unlocked: entered foreground"
                }
                try await Self.waitForRecord(daemon, "the logger's protectedDataDidBecomeAvailable record") {
                    $0["SERVICE"] == "logger" && $0["EVENT"] == "protectedDataDidBecomeAvailable"
                }
                let unlockedNote = try await Self.waitForRecord(daemon, "the sessionUnlocked notification in the journal") {
                    $0["MESSAGE_ID"] == MessageID.sessionUnlocked
                }
                #expect(unlockedNote["NOTIFICATION_TITLE"] == "Session unlocked" && unlockedNote["NOTIFICATION_REDACTED"] == nil, "\(unlockedNote)")

                // Memory warning (SIGRTMIN+18 is the trim request: critical).
                try await daemon.signal("SIGRTMIN+18")
                let warningNote = try await Self.waitForRecord(daemon, "the memory-warning notification in the journal") {
                    $0["MESSAGE_ID"] == MessageID.memoryWarning
                }
                #expect(warningNote["NOTIFICATION_TITLE"] == "Memory warning (critical)", "\(warningNote)")
                try await Self.waitForRecord(daemon, "the logger's memory-warning record") {
                    $0["SERVICE"] == "logger" && $0["EVENT"] == "didReceiveMemoryWarning.critical"
                }
                try await daemon.waitUntil("analytics flushed the memory warning") {
                    try await AnalyticsCounts.read(stateDirectory: daemon.stateDirectory).memoryWarnings.critical == 1
                }

                // Desktop notifications, through sd-bus to the server on the session bus.
                let memoryWarning = await server.calls.first(timeout: .seconds(30)) { $0.summary == "Memory warning (critical)" }
                #expect(memoryWarning != nil, "the notification server received no memory warning: \(server.calls.all)")
                let calls = server.calls.all
                #expect(calls.allSatisfy { $0.appName == Self.appName }, "\(calls)")
                #expect(calls.contains { $0.summary == "Session unlocked" }, "\(calls)")
                #expect(calls.contains { $0.summary == Self.appName && $0.body == "1 new notification" }, "no redacted lock notification: \(calls)")
                #expect(!calls.contains { $0.summary == "Session locked" || $0.body.contains("\(Self.appName) locked the session") }, "a notification sent while locked was not redacted: \(calls)")

                // Reload: the logger's level goes from info to notice, live.
                try daemon.writeConfig(text: Self.config(work: work, loggerLevel: "notice", sessionLock: sessionLock, notificationOn: notifyOn))
                let pid = try await daemon.mainPID()
                let reload = try await daemon.reload()
                #expect(reload.succeeded, "\(reload)")
                try await Self.waitForRecord(daemon, "the daemon logged the reload") {
                    $0["MESSAGE"]?.hasPrefix("reloaded \(daemon.configPath)") == true
                }
                #expect(try await daemon.mainPID() == pid, "the reload restarted the daemon")
                #expect(try await daemon.status()["StatusText"]?.contains("reload failed") == false)

                // Stop.
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                let stopDiagnostics = await daemon.diagnostics()
                #expect(daemon.lastExit == "success exited 0", "not a clean exit: \(stopDiagnostics)")

                // logger: the whole audit trail, in order, and the terminate record at the new level.
                let audit = try await Self.auditRecords(daemon)
                let driven = [
                    "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
                    "protectedDataWillBecomeUnavailable", "willEnterForeground", "didBecomeActive",
                    "protectedDataDidBecomeAvailable", "didReceiveMemoryWarning.critical", "willTerminate",
                ]
                let events = audit.compactMap { $0["EVENT"] }
                #expect(events.filter(Set(driven).contains) == driven, "\(events)")
                let terminate = try #require(audit.last { $0["EVENT"] == "willTerminate" })
                #expect(terminate["PRIORITY"] == "5", "the reload did not change the logger's level to notice: \(terminate)")
                #expect(terminate["FROM_STATE"] == "terminating" && terminate["TO_STATE"] == "notRunning", "\(terminate)")
                #expect(audit.filter { $0["EVENT"] != "willTerminate" }.allSatisfy { $0["PRIORITY"] == "6" }, "\(audit.map { "\($0["EVENT"] ?? "") \($0["PRIORITY"] ?? "")" })")

                // analytics: everything counted, reload and terminate included (flushed on SIGTERM).
                let report = try await AnalyticsCounts.read(stateDirectory: daemon.stateDirectory)
                #expect(report.launches == 1 && report.firstLaunches == 1, "\(report)")
                #expect(report.backgroundEntries == 1 && report.foregroundEntries == 1 && report.transitions == 2, "\(report)")
                #expect(report.memoryWarnings.critical == 1 && report.memoryWarnings.warning == 0, "\(report)")
                #expect(report.reloads == 1, "\(report)")
                #expect(report.sessionLocks == 1, "\(report)")
                #expect(report.terminations == 1, "\(report)")
                #expect(report.foregroundSeconds > 0 && report.backgroundSeconds > 0, "\(report)")

                // exec: one line per chosen event, with the event, state, instance name and extra environment.
                let lines = Self.execLines(work: work)
                let expected: [(String, String?)] = [
                    ("didFinishLaunching", "launching"), ("didEnterBackground", "background"),
                    ("protectedDataWillBecomeUnavailable", "background"), ("willEnterForeground", nil),
                    ("protectedDataDidBecomeAvailable", "active"), ("didReceiveMemoryWarning.critical", "active"),
                    ("willTerminate", "terminating"),
                ]
                #expect(lines.map { $0.first ?? "" } == expected.map(\.0), "\(lines)")
                for (line, (event, state)) in zip(lines, expected) {
                    #expect(line.count == 5, "\(line)")
                    if let state { #expect(line.dropFirst().first == state, "\(event): \(line)") }
                    #expect(Array(line.suffix(3)) == ["plugin", "1", "tagged"], "\(event): \(line)")
                }
                let records = try await daemon.daemonRecords()
                #expect(records.contains { $0["SERVICE"] == "plugin" && $0["STREAM"] == "stdout" && $0["MESSAGE"] == "plugin saw didEnterBackground" },
                        "the plug-in's stdout is not in the journal")

                try await Self.expectSecretNeverLogged(daemon, secret: secret)
                await server.stop()
            }
        }

        @Test("a missing secret keeps the session locked and says so; a loose file is refused; a good one unlocks; nothing crashes or leaks")
        func missingAndLooseSecret() async throws {
            let secret = "it-secret-\(UUID().uuidString)"
            try await DaemonUnderTest.with(services: [], unit: { unit, work in
                unit.environment["CREDENTIALS_DIRECTORY"] = work + "/credentials"
            }) { daemon in
                let work = daemon.workDirectory
                // The directory exists, the credential in it does not.
                try Self.writeCredential(directory: work + "/credentials", secret: nil)
                try Self.writePlugin(work: work)
                let notifyOn = ["didEnterBackground", "sessionUnlocked"]
                try daemon.writeConfig(text: Self.config(work: work, loggerLevel: "info", sessionLock: ["credential: session-secret"], notificationOn: notifyOn))

                try await daemon.startOrFail()
                let pid = try await daemon.mainPID()
                try await daemon.waitUntil("StatusText says locked because the secret is unavailable") {
                    try await daemon.status()["StatusText"]?.contains("session locked (secret unavailable:") == true
                }
                let missing = try await Self.waitForRecord(daemon, "session-lock said the secret is missing") {
                    $0["SERVICE"] == "session-lock" && $0["MESSAGE"]?.hasPrefix("session starts locked: the secret") == true
                }
                #expect(missing["MESSAGE"]?.contains("\(work)/credentials/session-secret does not exist") == true, "\(missing)")
                #expect(missing["PRIORITY"] == "3", "\(missing)")
                #expect(missing["SECRET"] == "\(work)/credentials/session-secret", "\(missing)")
                #expect(try await daemon.stateWord() == "active")

                // A notification while locked is redacted.
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                let note = try await Self.waitForRecord(daemon, "the didEnterBackground notification") { $0["MESSAGE_ID"] == MessageID.lifecycle }
                #expect(note["NOTIFICATION_REDACTED"] == "true" && note["NOTIFICATION_BODY"] == "1 new notification", "\(note)")

                // Foreground cannot unlock: it stays locked and says why, again.
                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                try await Self.waitForRecord(daemon, "session-lock said it stays locked") {
                    $0["SERVICE"] == "session-lock" && $0["MESSAGE"]?.hasPrefix("session stays locked: the secret") == true
                        && $0["MESSAGE"]?.contains("does not exist") == true
                }
                #expect(try await daemon.status()["StatusText"]?.contains("session locked") == true)

                // A secret file that group and others can read is refused, with the fix in the message.
                let loose = work + "/loose-secret"
                _ = FileManager.default.createFile(atPath: loose, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o644])
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: loose)
                try daemon.writeConfig(text: Self.config(work: work, loggerLevel: "info", sessionLock: ["secret-file: \(loose)"], notificationOn: notifyOn))
                _ = try await daemon.reload()
                try await Self.waitForRecord(daemon, "the reload was applied") { $0["MESSAGE"]?.hasPrefix("reloaded \(daemon.configPath)") == true }
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                let refused = try await Self.waitForRecord(daemon, "session-lock refused the loose file") {
                    $0["SERVICE"] == "session-lock" && $0["MESSAGE"]?.contains("was refused") == true
                }
                #expect(refused["MESSAGE"]?.contains("mode 0644") == true && refused["MESSAGE"]?.contains("chmod 600 \(loose)") == true, "\(refused)")
                #expect(try await daemon.status()["StatusText"]?.contains("session locked") == true)

                // Fixed: the next foreground unlocks.
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: loose)
                try await daemon.signal("SIGRTMIN+1")
                try await daemon.waitForState("background")
                try await daemon.signal("SIGRTMIN+2")
                try await daemon.waitForState("active")
                try await daemon.waitUntil("the session unlocks with the fixed file") {
                    try await daemon.status()["StatusText"]?.contains("session locked") == false
                }
                let unlocked = try await Self.waitForRecord(daemon, "the sessionUnlocked notification") { $0["MESSAGE_ID"] == MessageID.sessionUnlocked }
                #expect(unlocked["NOTIFICATION_REDACTED"] == nil, "\(unlocked)")

                #expect(try await daemon.mainPID() == pid, "the daemon restarted")
                let stop = try await daemon.stop()
                #expect(stop.succeeded, "\(stop)")
                let stopDiagnostics = await daemon.diagnostics()
                #expect(daemon.lastExit == "success exited 0", "not a clean exit: \(stopDiagnostics)")
                try await Self.expectSecretNeverLogged(daemon, secret: secret)
            }
        }
    }
}

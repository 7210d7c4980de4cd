import AppHostTestSupport
import Foundation
import Testing

// The state across restarts: the state directory as the system user (and from a DynamicUser=
// install), SIGKILL and systemd's restart (restorable state, the fd store, analytics), restart and
// stop-start, and the next launch naming how the last process ended.
extension IntegrationSuites.SystemManagerTests {
    @Test("the state directory belongs to the system user apphostd and survives systemctl restart: the launch count goes up by one")
    func stateSurvivesRestartAsTheSystemUser() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let before = try await Self.analytics(system)
        let launches = try #require(before["launches"] as? Int, "\(before)")
        let cleanExits = try #require(before["cleanPreviousExits"] as? Int, "\(before)")
        let oldPID = try await system.show(Self.unit)["MainPID"]

        let restart = try await system.systemctl("restart", Self.unit, timeout: .seconds(120))
        #expect(restart.succeeded, "\(restart)")
        let status = try await Self.waitForStatus(system, "running again after restart", Self.isActiveAndForeground)
        #expect(status["MainPID"] != oldPID, "\(status)")
        var after: [String: Any] = [:]
        let counted = try await eventually(timeout: .seconds(15), every: .milliseconds(100)) {
            after = try await Self.analytics(system)
            return after["launches"] as? Int == launches + 1
        }
        #expect(counted, "launches \(launches) before the restart, after: \(after)")
        #expect(after["cleanPreviousExits"] as? Int == cleanExits + 1, "the restart's stop was not recorded as a clean exit: \(after)")

        // User=apphostd (install.sh's sysusers.d): /var/lib/apphostd is a directory of that
        // user's, 0700, and the daemon runs as it.
        let expected = try await system.run(["id", "-u", "apphostd"])
        let uid = try #require(Int(expected.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "no user apphostd: \(expected)")
        #expect(uid != 0)
        let owner = try await system.run(["stat", "-c", "%u %a %F", "/var/lib/apphostd"])
        #expect(owner.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(uid) 700 directory", "\(owner)")
        let pid = try #require(status["MainPID"])
        let processStatus = try await system.run(["cat", "/proc/\(pid)/status"])
        let uidLine = processStatus.stdout.split(separator: "\n").first { $0.hasPrefix("Uid:") } ?? ""
        #expect(uidLine.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { Int($0) } == uid,
                "the daemon does not run as the state directory's owner \(uid): \(uidLine)")
    }

    @Test("an install from the DynamicUser= days: systemd moves /var/lib/private/apphostd back to /var/lib/apphostd and gives it to the user apphostd, and the launch count goes on")
    func stateOfADynamicUserInstallMovesToTheSystemUser() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        #expect(try await system.systemctl("stop", Self.unit, timeout: .seconds(60)).succeeded)
        let launches = try #require(try await Self.analytics(system)["launches"] as? Int)
        // What systemd left of a DynamicUser= unit: the directory under private/, owned by a
        // uid of the dynamic range, and a link to it.
        let staged = try await system.run(["sh", "-ec", """
            mkdir -p -m 0700 /var/lib/private
            mv /var/lib/apphostd /var/lib/private/apphostd
            chown -R 61999:61999 /var/lib/private/apphostd
            ln -s private/apphostd /var/lib/apphostd
            """])
        try #require(staged.succeeded, "\(staged)")
        let start = try await system.systemctl("start", Self.unit, timeout: .seconds(120))
        let journal = start.succeeded ? "" : await system.journalText(unit: Self.unit)
        #expect(start.succeeded, "\(start)\n\(journal)")
        try await Self.waitForStatus(system, "running after the move", Self.isActiveAndForeground)
        let moved = try await system.run(["stat", "-c", "%U %a %F", "/var/lib/apphostd"])
        #expect(moved.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "apphostd 700 directory", "\(moved)")
        let strangers = try await system.run(["find", "/var/lib/apphostd", "!", "-user", "apphostd"])
        #expect(strangers.succeeded && strangers.stdout.isEmpty, "files not given to apphostd: \(strangers)")
        #expect(try await system.run(["test", "-e", "/var/lib/private/apphostd"]).succeeded == false, "the private directory stayed")
        #expect(try await Self.analytics(system)["launches"] as? Int == launches + 1, "the state did not come along")
    }

    /// The generation of the restorable state on disk (0 when there is none yet): the
    /// format's bytes 5 to 12, little-endian.
    static func diskGeneration(_ system: SystemManager) -> UInt64 {
        guard let data = FileManager.default.contents(atPath: system.root + "/var/lib/apphostd/restorable-state"), data.count >= 13 else { return 0 }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(data[data.startIndex + 5 + $1]) << UInt64($1 * 8) }
    }

    /// Counts from `apphostd analytics --json`.
    static func counts(_ system: SystemManager) async throws -> (sessionLocks: Int, reloads: Int, launches: Int) {
        let report = try await analytics(system)
        return (report["sessionLocks"] as? Int ?? -1, report["reloads"] as? Int ?? -1, report["launches"] as? Int ?? -1)
    }

    /// SIGKILLs the daemon and waits for systemd to restart it (`Restart=on-failure`) until
    /// `condition` holds; returns the new status.
    @discardableResult
    static func killAndAwaitRestart(_ system: SystemManager, _ what: String, _ condition: @escaping ([String: String]) -> Bool) async throws -> [String: String] {
        let before = try await system.show(unit)
        let oldPID = before["MainPID"]
        // The suite starts the unit more often than StartLimitBurst= allows in 10 s (a limit
        // for crash loops); reset-failed clears it, and NRestarts with it.
        try await system.systemctl("reset-failed", unit)
        let restarts = Int(try await system.show(unit, ["NRestarts"])["NRestarts"] ?? "") ?? 0
        // A crash: the main process dies. (Killing the whole cgroup, `systemctl kill`'s
        // default, makes systemd 257 skip ExecStopPost=, so record-exit would not run:
        // measured under Debian 13; 252 runs it either way.)
        try await system.systemctl("kill", "--kill-whom=main", "-s", "SIGKILL", unit)
        let status = try await waitForStatus(system, what, timeout: .seconds(30)) { status in
            status["MainPID"] != oldPID && status["MainPID"] != "0" && condition(status)
        }
        let after = Int(try await system.show(unit, ["NRestarts"])["NRestarts"] ?? "") ?? 0
        #expect(after == restarts + 1, "systemd did not count a restart: \(restarts) → \(after)")
        return status
    }

    // Fails on a daemon without restorable state: it comes back active and unlocked, and
    // the lock and the reload, counted after the background's flush, are gone.
    @Test("SIGKILL in the background with the session locked: systemd restarts it into the background, still locked, and analytics lost no event, not even those counted after its last flush")
    func sigkillInTheBackgroundComesBackAsItWas() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
        try await Self.waitForStatus(system, "background, session locked", Self.isBackgroundAndLocked)
        // The background flushed analytics; the lock (counted in
        // protectedDataWillBecomeUnavailable, after the flush) and this reload wait for the
        // next flush, a minute away: they are not on disk when the kill comes.
        let reload = try await system.systemctl("reload", Self.unit, timeout: .seconds(60))
        #expect(reload.succeeded, "\(reload)")
        let onDisk = try await Self.counts(system)
        let cursor = try await system.journalCursor()

        try await Self.killAndAwaitRestart(system, "restarted into the background, session locked", Self.isBackgroundAndLocked)
        let invocation = try await Self.invocation(system)
        try await Self.waitForJournal(system, "the restore line", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
            $0["MESSAGE"]?.hasPrefix("restored after an unclean exit (signal KILL): background, session locked") == true
        }
        var after = onDisk
        let counted = try await eventually(timeout: .seconds(15), every: .milliseconds(100)) {
            after = try await Self.counts(system)
            return after.launches == onDisk.launches + 1
        }
        #expect(counted, "the restart's launch was not counted: \(onDisk) → \(after)")
        #expect(after.sessionLocks == onDisk.sessionLocks + 1, "the lock made after the last flush: \(onDisk) → \(after)")
        #expect(after.reloads == onDisk.reloads + 1, "the reload made after the last flush: \(onDisk) → \(after)")

        // Back to the foreground: the secret is read again and the session unlocks.
        try await system.systemctl("kill", "-s", "SIGRTMIN+2", Self.unit)
        try await Self.waitForStatus(system, "foreground, unlocked", Self.isActiveAndForeground)
    }

    @Test("a change after the last disk write, then SIGKILL: the restart restores the newer state, from systemd's fd store")
    func sigkillRestoresTheNewerStateFromTheFileDescriptorStore() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        let before = Self.diskGeneration(system)
        try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
        try await Self.waitForStatus(system, "background, session locked", Self.isBackgroundAndLocked)
        // The background is written to disk after its STATUS=, off the request's path.
        var onDisk = before
        let written = await eventually(timeout: .seconds(10), every: .milliseconds(50)) {
            onDisk = Self.diskGeneration(system)
            return onDisk > before
        }
        #expect(written, "the background's state never reached the disk (generation \(before))")
        // A reload: analytics counts it (its restorable state changes), the lifecycle does
        // not, so only the fd store gets the new state.
        let reload = try await system.systemctl("reload", Self.unit, timeout: .seconds(60))
        #expect(reload.succeeded, "\(reload)")
        #expect(Self.diskGeneration(system) == onDisk, "a reload in the background wrote the disk")
        let cursor = try await system.journalCursor()

        try await Self.killAndAwaitRestart(system, "restarted into the background", Self.isBackgroundAndLocked)
        let invocation = try await Self.invocation(system)
        let records = try await Self.waitForJournal(system, "the restore line", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
            $0["MESSAGE"]?.hasPrefix("restored after an unclean exit") == true
        }
        let line = try #require(records.first { $0["MESSAGE"]?.hasPrefix("restored after an unclean exit") == true })
        let generation = try #require(UInt64(line["GENERATION"] ?? ""), "\(line)")
        #expect(generation > onDisk, "restored generation \(generation), the disk's is \(onDisk): not the fd store's newer copy")

        try await system.systemctl("kill", "-s", "SIGRTMIN+2", Self.unit)
        try await Self.waitForStatus(system, "foreground, unlocked", Self.isActiveAndForeground)
    }

    @Test("systemctl restart, and stop then start, give every service that kept state its bytes back and start in the foreground")
    func restartAndStopStartGiveTheBytesBack() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)
        // analytics (what it has not flushed) and session-lock (its lock) keep state.
        let restoredLine = "restored the state of 2 services"
        for (what, commands) in [("restart", [["restart"]]), ("stop, then start", [["stop"], ["start"]])] {
            let cursor = try await system.journalCursor()
            // This suite starts the unit more often than StartLimitBurst= allows in 10 s (a
            // limit for crash loops); an operator resets it the same way.
            try await system.systemctl("reset-failed", Self.unit)
            for command in commands {
                let result = try await system.systemctl(command[0], Self.unit, timeout: .seconds(120))
                #expect(result.succeeded, "systemctl \(command[0]): \(result)")
            }
            try await Self.waitForStatus(system, "running in the foreground after \(what)", Self.isActiveAndForeground)
            let invocation = try await Self.invocation(system)
            try await Self.waitForJournal(system, "\"\(restoredLine)\" after \(what)", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"]?.hasPrefix(restoredLine) == true
            }
        }
        let mode = try await system.run(["stat", "-c", "%a", "/var/lib/apphostd/restorable-state"])
        #expect(mode.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "600", "\(mode)")
    }

    /// The launch line of the daemon's current invocation that says how the previous run
    /// ended, after `cursor`.
    static func previousExitLine(_ system: SystemManager, after cursor: String?, _ expected: String) async throws -> [String: String] {
        let invocation = try await invocation(system)
        let records = try await waitForJournal(system, "the launch line \"\(expected)\"", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
            $0["MESSAGE"]?.contains("the previous run ended") == true
        }
        return try #require(records.first { $0["MESSAGE"]?.contains("the previous run ended") == true })
    }

    // Fails on a daemon without `apphostd record-exit` in the unit's ExecStopPost=: its
    // launch knows only "clean" or "unclean".
    @Test("the next launch names why the last process ended, as systemd saw it: signal KILL, clean after stop and start, exit code 78 after a broken config; apphostd analytics counts each")
    func theNextLaunchNamesTheExitCause() async throws {
        let system = try Self.system()
        try await Self.ensureActive(system)

        var cursor = try await system.journalCursor()
        try await Self.killAndAwaitRestart(system, "restarted after SIGKILL", Self.isActiveAndForeground)
        var line = try await Self.previousExitLine(system, after: cursor, "signal KILL")
        #expect(line["MESSAGE"]?.hasSuffix("the previous run ended: signal KILL") == true, "\(line)")
        #expect(line["EXIT_CAUSE"] == "signal KILL", "\(line)")
        // What ExecStopPost= said, in the unit's journal for the operator.
        try await Self.waitForJournal(system, "record-exit's line", matches: ["-u", Self.unit], after: cursor) {
            $0["MESSAGE"]?.hasPrefix("record-exit: the process ended: signal KILL") == true && $0["EXIT_CAUSE"] == "signal KILL"
        }

        cursor = try await system.journalCursor()
        try await system.systemctl("reset-failed", Self.unit)
        for command in ["stop", "start"] {
            let result = try await system.systemctl(command, Self.unit, timeout: .seconds(120))
            #expect(result.succeeded, "systemctl \(command): \(result)")
        }
        line = try await Self.previousExitLine(system, after: cursor, "cleanly")
        #expect(line["MESSAGE"]?.hasSuffix("the previous run ended cleanly") == true, "\(line)")

        // A broken config: the start exits 78 (RestartPreventExitStatus= keeps it down), and
        // record-exit, which cannot read that config either, records in $STATE_DIRECTORY.
        let good = try system.read(Self.configPath)
        let broken = good.replacingOccurrences(of: "\nhost:\n", with: "\nhost:\n  bogus-key: 1\n")
        try #require(broken != good, "the installed config has no 'host:' line")
        try system.write(broken, to: Self.configPath)
        defer { try? system.write(good, to: Self.configPath) }
        try await system.systemctl("reset-failed", Self.unit)
        let restart = try await system.systemctl("restart", Self.unit, timeout: .seconds(120))
        #expect(!restart.succeeded, "a start with a broken config succeeded: \(restart)")
        try await Self.waitForStatus(system, "stopped with exit status 78") { $0["ActiveState"] == "failed" && $0["ExecMainStatus"] == "78" }
        try system.write(good, to: Self.configPath)
        cursor = try await system.journalCursor()
        try await system.systemctl("reset-failed", Self.unit)
        let start = try await system.systemctl("start", Self.unit, timeout: .seconds(120))
        #expect(start.succeeded, "\(start)")
        line = try await Self.previousExitLine(system, after: cursor, "exit code 78")
        #expect(line["MESSAGE"]?.hasSuffix("the previous run ended: exit code 78") == true, "\(line)")

        var causes: [String: Int] = [:]
        let counted = try await eventually(timeout: .seconds(15), every: .milliseconds(100)) {
            causes = try await Self.analytics(system)["exitsByCause"] as? [String: Int] ?? [:]
            return causes["exit code 78", default: 0] >= 1
        }
        #expect(counted, "analytics did not count the exit code: \(causes)")
        #expect(causes["signal KILL", default: 0] >= 1 && causes["clean", default: 0] >= 1, "\(causes)")
        try await Self.waitForStatus(system, "running in the foreground", Self.isActiveAndForeground)
    }
}

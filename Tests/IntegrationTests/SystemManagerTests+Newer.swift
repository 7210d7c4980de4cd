import Foundation
import Testing

extension IntegrationSuites.SystemManagerTests {
    /// What systemd 254 and later add, in the booted Debian 13 (systemd 257); under Debian 12's
    /// 252 each of these is skipped and says so.
    static func requireNewer(_ system: SystemManager, _ feature: String) throws {
        if system.systemdVersion < 254 {
            try Test.cancel("\(feature) needs systemd 254 or later; \(DebianRoot.release.name) booted systemd \(system.systemdVersion) (scripts/test.sh runs this suite under Debian 13 too)")
        }
    }

    /// The daemon's variables as systemd set them (`/proc/PID/environ`, read inside).
    static func environment(_ system: SystemManager) async throws -> [String: String] {
        let pid = try await system.show(unit, ["MainPID"])["MainPID"] ?? ""
        let result = try await system.run(["cat", "/proc/\(pid)/environ"])
        guard result.succeeded else { throw HarnessError("cannot read the daemon's environment: \(result)") }
        var variables: [String: String] = [:]
        for entry in result.stdout.split(separator: "\0") {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            variables[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return variables
    }

    /// The start-up line (`apphostd VERSION starting`) of the current invocation.
    static func startLine(_ system: SystemManager, after cursor: String?) async throws -> [String: String] {
        let invocation = try await invocation(system)
        let records = try await waitForJournal(system, "the start-up line", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
            $0["MESSAGE"]?.hasSuffix(" starting") == true
        }
        return try #require(records.first { $0["MESSAGE"]?.hasSuffix(" starting") == true })
    }

    /// Restarts the unit (its start limit reset first) and returns the new start-up line.
    static func restartAndReadStartLine(_ system: SystemManager) async throws -> [String: String] {
        try await ensureActive(system)
        let cursor = try await system.journalCursor()
        try await system.systemctl("reset-failed", unit)
        let restart = try await system.systemctl("restart", unit, timeout: .seconds(120))
        #expect(restart.succeeded, "\(restart)")
        try await waitForStatus(system, "running after restart", isActiveAndForeground)
        return try await startLine(system, after: cursor)
    }

    @Test("systemd 254+: $FDSTORE is read, and the start-up line says how many fds the store holds")
    func fileDescriptorStoreSizeIsRead() async throws {
        let system = try Self.system()
        try Self.requireNewer(system, "$FDSTORE")
        let line = try await Self.restartAndReadStartLine(system)
        let environment = try await Self.environment(system)
        #expect(environment["FDSTORE"] == "1", "systemd set FDSTORE=\(environment["FDSTORE"] ?? "(nothing)") for FileDescriptorStoreMax=1")
        #expect(line["RESTORABLE_STATE"]?.hasPrefix("systemd fd store, entry apphost-state, room for 1") == true, "\(line)")
    }

    @Test("systemd 254+: the memory-pressure source is what systemd set in $MEMORY_PRESSURE_WATCH, and the start-up line names it")
    func memoryPressureWatchFromSystemd() async throws {
        let system = try Self.system()
        try Self.requireNewer(system, "MemoryPressureWatch=")
        let line = try await Self.restartAndReadStartLine(system)
        let environment = try await Self.environment(system)
        let source = line["MEMORY_PRESSURE"] ?? ""
        print("IntegrationTests: systemd \(system.systemdVersion) set MEMORY_PRESSURE_WATCH=\(environment["MEMORY_PRESSURE_WATCH"] ?? "(nothing)"); the daemon watches \(source)")
        let watch = try #require(environment["MEMORY_PRESSURE_WATCH"], "systemd \(system.systemdVersion) set no $MEMORY_PRESSURE_WATCH (the daemon watches \(source))")
        #expect(source.hasPrefix("MEMORY_PRESSURE_WATCH=\(watch) "), "\(line)")
    }

    @Test("systemd 254+ with FileDescriptorStorePreserve=yes: after systemctl stop, the state directory's copy removed, and start, the state comes back from the fd store")
    func preservedStoreOutlivesStopAndStart() async throws {
        let system = try Self.system()
        try Self.requireNewer(system, "FileDescriptorStorePreserve=")
        let dropIn = "/etc/systemd/system/\(Self.unit).service.d/preserve-fd-store.conf"
        try FileManager.default.createDirectory(atPath: system.root + "/etc/systemd/system/\(Self.unit).service.d", withIntermediateDirectories: true)
        try system.write("[Service]\nFileDescriptorStorePreserve=yes\n", to: dropIn)
        try await system.systemctl("daemon-reload")
        // The preserved store holds while the unit stays loaded: an enabled unit does.
        let enable = try await system.systemctl("enable", Self.unit)
        #expect(enable.succeeded, "\(enable)")
        try await Self.ensureActive(system)

        // A state to keep: the background locks the session (session-lock keeps its lock).
        try await system.systemctl("kill", "-s", "SIGUSR1", Self.unit)
        try await Self.waitForStatus(system, "background, session locked", Self.isBackgroundAndLocked)
        let cursor = try await system.journalCursor()
        try await system.systemctl("reset-failed", Self.unit)
        let stop = try await system.systemctl("stop", Self.unit, timeout: .seconds(120))
        #expect(stop.succeeded, "\(stop)")
        // Without the store the next start would find nothing: the disk's copy is gone.
        try? FileManager.default.removeItem(atPath: system.root + "/var/lib/apphostd/restorable-state")
        let start = try await system.systemctl("start", Self.unit, timeout: .seconds(120))
        #expect(start.succeeded, "\(start)")
        let invocation = try await Self.invocation(system)
        var failure: (any Error)?
        do {
            try await Self.waitForJournal(system, "the state restored from the fd store", matches: ["_SYSTEMD_INVOCATION_ID=\(invocation)"], after: cursor) {
                $0["MESSAGE"]?.hasPrefix("restored the state of") == true
            }
        } catch {
            failure = error
        }

        try FileManager.default.removeItem(atPath: system.root + dropIn)
        try await system.systemctl("daemon-reload")
        try await Self.ensureActive(system)
        if let failure { throw failure }
    }
}

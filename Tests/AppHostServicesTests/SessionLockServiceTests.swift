@testable import AppHostServices
import AppHost
import Foundation
import Logging
import Synchronization
import AppHostTestSupport
import AppHostTestKit
import Testing

/// A service that records the name of every hook it receives, and with the protected-data hooks
/// whether the session was locked when they ran, which the test kit's recorded calls do not say.
struct HookRecordingService: ApplicationService {
    let events: TestLog<String>

    func applicationDidBecomeActive(_ application: ApplicationHandle) async throws { events.append("didBecomeActive") }
    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws { events.append("didEnterBackground") }
    func applicationWillEnterForeground(_ application: ApplicationHandle) async throws { events.append("willEnterForeground") }
    func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        events.append("protectedDataWillBecomeUnavailable locked=\(application.isSessionLocked)")
    }
    func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        events.append("protectedDataDidBecomeAvailable locked=\(application.isSessionLocked)")
    }
}

@Suite struct SessionLockServiceTests {
    func lockService(_ settings: [String: SettingValue], environment: [String: String] = [:]) throws -> SessionLockService {
        try SessionLockService(configuration: ServiceSection(settings), environment: environment)
    }

    @Test func locksOnBackgroundAndUnlocksOnForegroundWithTheSecretReRead() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret("hunter2-session", to: path)
        let service = try lockService(["secret-file": .string(path)])
        let events = TestLog<String>()
        let logs = CapturedLogs()
        try await withRunningHost([
            ServiceDescriptor(name: "recorder", service: HookRecordingService(events: events)),
            ServiceDescriptor(name: "session-lock", service: service),
        ], logs: logs) { host in
            #expect(service.hasSecret)
            let changes = host.bus.subscribe(to: SessionLockDidChange.self)
            try await host.enterBackground()
            #expect(await events.first { $0.hasPrefix("protectedDataWillBecomeUnavailable") } != nil)
            #expect(!service.hasSecret)
            #expect(service.isLocked)
            try await host.enterForeground()
            #expect(await events.first { $0.hasPrefix("protectedDataDidBecomeAvailable") } != nil)
            #expect(service.hasSecret)
            var iterator = changes.makeAsyncIterator()
            #expect(await iterator.next() == SessionLockDidChange(isLocked: true, reason: "entered background"))
            #expect(await iterator.next() == SessionLockDidChange(isLocked: false, reason: "entered foreground"))
        }
        let protected = events.all.filter { $0.hasPrefix("protectedData") }
        #expect(protected == ["protectedDataWillBecomeUnavailable locked=false", "protectedDataDidBecomeAvailable locked=false"])
        // The lock comes after the background transition, the unlock after the foreground one.
        let all = events.all
        #expect(all.firstIndex(of: "didEnterBackground")! < all.firstIndex(of: "protectedDataWillBecomeUnavailable locked=false")!)
        #expect(all.firstIndex(of: "willEnterForeground")! < all.firstIndex(of: "protectedDataDidBecomeAvailable locked=false")!)
        #expect(!logs.all.contains { $0.message.contains("hunter2") || $0.metadata.values.contains { $0.contains("hunter2") } })
    }

    @Test("its restorable state is the lock, never the secret; restored locked after an unclean exit, it does not read the secret at launch")
    func keepsTheLockAsRestorableStateAndNotTheSecret() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret("hunter2-restore", to: path)
        let storage = InMemoryRestorableStateStorage()
        let configuration = PluggableApplicationHost.Configuration(restorableState: storage)
        try await withTestHost([ServiceDescriptor(name: "session-lock", service: try lockService(["secret-file": .string(path)]))], configuration: configuration) { host in
            try await host.launched()
            #expect(storage.kept.all.last?.services["session-lock"] == [0])
            try await host.enterBackground()
            let kept = try #require(storage.kept.all.last)
            #expect(kept.services["session-lock"] == [1])
            #expect(kept.isSessionLocked && kept.isInBackground)
            #expect(!kept.encoded().containsSubsequence(Array("hunter2-restore".utf8)))
        }

        struct Crashed: LaunchStateStorage {
            func beginLaunch() throws -> LaunchOptions { .testing(launchCount: 2, previousExit: .unclean) }
            func markCleanExit(of options: LaunchOptions) throws -> String? { nil }
        }
        let restored = try lockService(["secret-file": .string(path)])
        let locked = InMemoryRestorableStateStorage(services: ["session-lock": [1]], isInBackground: true, isSessionLocked: true, sessionLockReason: "entered background")
        try await withTestHost([ServiceDescriptor(name: "session-lock", service: restored)], configuration: .init(launchState: Crashed(), restorableState: locked)) { host in
            try await host.launched()
            #expect(host.state == .background)
            #expect(restored.isLocked && !restored.hasSecret)
            try await host.enterForeground()
            #expect(!restored.isLocked && restored.hasSecret)
        }
    }

    @Test func returningWithinTheGracePeriodCancelsTheLock() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret("grace", to: path)
        let service = try lockService(["secret-file": .string(path), "grace-period": .string("1s")])
        let statuses = TestLog<SessionLockStatus>()
        try await withRunningHost([
            ServiceDescriptor(name: "recorder", service: IdleService()),
            ServiceDescriptor(name: "session-lock", service: service),
        ]) { host in
            let stream = host.bus.subscribe(to: SessionLockStatus.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Forwards bus messages into the awaitable log until the test is done with them.
                group.addTask { for await status in stream { statuses.append(status) } }
                defer { group.cancelAll() }

                try await host.enterBackground()
                #expect(await statuses.first { $0.isLockPending } != nil)
                try await host.enterForeground()
                #expect(await statuses.first { !$0.isLockPending && !$0.isLocked } != nil)
                // Nothing to await for an absence: give the cancelled timer more than its time to
                // misfire. (A grace period of a second: a loaded machine can take 300 ms between
                // two requests, and the lock would then be right to come.)
                try await Task.sleep(for: .milliseconds(1200))
                #expect(!host.calls.all.contains { $0.service == "recorder" && [.protectedDataWillBecomeUnavailable, .protectedDataDidBecomeAvailable].contains($0.event) })
                #expect(service.hasSecret)
                #expect(!service.isLocked)

                // Without a return, the lock comes once the grace period is over, not before.
                let start = ContinuousClock.now
                try await host.enterBackground()
                #expect(await host.calls.first { $0 == RecordedHookCall("recorder", .protectedDataWillBecomeUnavailable) } != nil)
                #expect(ContinuousClock.now - start >= .seconds(1))
                #expect(!service.hasSecret)
            }
        }
    }

    @Test func aMissingSecretKeepsTheSessionLockedAndSaysWhy() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/absent"
        let service = try lockService(["secret-file": .string(path)])
        let logs = CapturedLogs()
        try await withRunningHost([
            ServiceDescriptor(name: "recorder", service: IdleService()),
            ServiceDescriptor(name: "session-lock", service: service),
        ], logs: logs) { host in
            // Starts locked: the host fans out the lock although nothing went to the background.
            #expect(await host.calls.first { $0 == RecordedHookCall("recorder", .protectedDataWillBecomeUnavailable) } != nil)
            let launchError = await logs.first { $0.level == .error && $0.message.contains("session starts locked") }
            #expect(launchError?.message.contains(path) == true)
            #expect(launchError?.message.contains("does not exist") == true)

            try await host.enterBackground()
            try await host.enterForeground()
            let unlockError = await logs.first { $0.level == .error && $0.message.contains("session stays locked") }
            #expect(unlockError?.message.contains(path) == true)
            #expect(service.isLocked)
            #expect(!service.hasSecret)

            // Once the file is there, the next foreground unlocks.
            try writeSecret("now-here", to: path)
            try await host.enterBackground()
            try await host.enterForeground()
            #expect(await host.calls.first { $0 == RecordedHookCall("recorder", .protectedDataDidBecomeAvailable) } != nil)
            #expect(service.hasSecret)
        }
    }

    @Test func aLockFromElsewhereWipesTheSecretAndForegroundUnlocks() async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        let path = directory + "/secret"
        try writeSecret("elsewhere", to: path)
        let service = try lockService(["secret-file": .string(path)])
        try await withRunningHost([
            ServiceDescriptor(name: "recorder", service: IdleService()),
            ServiceDescriptor(name: "session-lock", service: service),
        ]) { host in
            try await host.setSessionLocked(true)
            #expect(!service.hasSecret)
            #expect(service.isLocked)
            try await host.enterBackground()
            try await host.enterForeground()
            #expect(await host.calls.first { $0 == RecordedHookCall("recorder", .protectedDataDidBecomeAvailable) } != nil)
            #expect(service.hasSecret)
            #expect(!service.isLocked)
        }
    }

    @Test func settingsAreValidatedStrictly() {
        #expect(throws: ConfigurationError.self) { try lockService(["credential": .string("a"), "secret-file": .string("/b")]) }
        #expect(throws: ConfigurationError.self) { try lockService(["secret-file": .string("relative/path")]) }
        #expect(throws: ConfigurationError.self) { try lockService(["credential": .string("../escape")]) }
        #expect(throws: ConfigurationError.self) { try lockService(["grace-period": .string("soon")]) }
        #expect(throws: ConfigurationError.self) { try lockService(["grace": .string("1s")]) }
        #expect(throws: Never.self) { try lockService([:]) }
        #expect(SessionLockService.typeName == "session-lock")
    }
}

extension [UInt8] {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        return (0...(count - needle.count)).contains { Array(self[$0..<($0 + needle.count)]) == needle }
    }
}

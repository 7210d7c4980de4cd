@testable import AppHostServices
import AppHost
import AppHostTestKit
import AppHostTestSupport
import Testing

// The screen rule beside the background rule: the session is locked while either says so, and
// unlocks only when neither does.
extension SessionLockServiceTests {
    /// A session-lock service with a readable secret, and a host around it.
    func withScreenLockHost(grace: String = "0s", _ body: (TestHost, SessionLockService) async throws -> Void) async throws {
        let directory = try makeTemporaryDirectory("apphost-session")
        try writeSecret("hunter2-screen", to: directory + "/secret")
        let service = try lockService(["secret-file": .string(directory + "/secret"), "grace-period": .string(grace)])
        try await withRunningHost([ServiceDescriptor(name: "session-lock", service: service)]) { host in
            try await body(host, service)
        }
    }

    func screen(_ host: TestHost, locked: Bool) {
        host.host.bus.publish(ScreenLockDidChange(isLocked: locked, session: "3"))
    }

    func lockReason(_ host: TestHost) -> String? {
        host.status.sessionLockReason
    }

    @Test("a locked screen locks the session (reason screen locked, cause screen-lock) and its unlock unlocks it with the secret read again")
    func theScreenLocksTheSession() async throws {
        try await withScreenLockHost { host, service in
            let records = host.messages(of: LifecycleEventRecord.self)
            screen(host, locked: true)
            #expect(await eventually { lockReason(host) == "screen locked" })
            #expect(!service.hasSecret)
            #expect(host.status.description.contains("session locked (screen locked)"), "\(host.status)")
            #expect(records.all.last { $0.event == .protectedDataWillBecomeUnavailable }?.cause == "screen-lock")
            screen(host, locked: false)
            #expect(await eventually { lockReason(host) == nil })
            #expect(service.hasSecret)
            #expect(records.all.last { $0.event == .protectedDataDidBecomeAvailable }?.cause == "screen-lock")
        }
    }

    // Fails where one rule undoes the other: the screen's unlock would unlock a background lock.
    @Test("in the background a screen unlock leaves the session locked; the foreground then unlocks it")
    func aScreenUnlockDoesNotUndoTheBackgroundLock() async throws {
        try await withScreenLockHost { host, service in
            try await host.enterBackground()
            #expect(lockReason(host) == "entered background")
            screen(host, locked: true)
            screen(host, locked: false)
            // A barrier: the service's run loop has taken both changes once its next request is done.
            #expect(await eventually { host.logs.all.contains { $0.message.hasPrefix("screen unlocked; the session stays locked") } })
            #expect(service.isLocked && lockReason(host) != nil, "\(host.status)")
            try await host.enterForeground()
            #expect(await eventually { lockReason(host) == nil })
        }
    }

    @Test("with the screen locked a return to the foreground leaves the session locked; the screen's unlock then unlocks it")
    func theForegroundDoesNotUndoTheScreenLock() async throws {
        try await withScreenLockHost { host, service in
            screen(host, locked: true)
            #expect(await eventually { lockReason(host) == "screen locked" })
            try await host.enterBackground()
            try await host.enterForeground()
            #expect(service.isLocked && lockReason(host) != nil, "\(host.status)")
            screen(host, locked: false)
            #expect(await eventually { lockReason(host) == nil })
            #expect(service.hasSecret)
        }
    }

    @Test("with a grace period, a screen unlock within it unlocks; the background lock still comes when the grace period ends")
    func aScreenUnlockWithinTheGracePeriod() async throws {
        try await withScreenLockHost(grace: "2s") { host, _ in
            screen(host, locked: true)
            #expect(await eventually { lockReason(host) == "screen locked" })
            try await host.enterBackground()
            screen(host, locked: false)
            #expect(await eventually { lockReason(host) == nil }, "the background lock is still pending")
            #expect(await eventually(timeout: .seconds(10)) { lockReason(host) == "entered background 2s ago" })
        }
    }
}

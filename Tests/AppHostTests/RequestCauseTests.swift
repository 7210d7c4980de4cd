@testable import AppHost
import AppHostTestKit
import AppHostTestSupport
import ServiceContextModule
import Synchronization
import Testing

/// A request the machine asked for (logind's sleep, its resume) carries its cause wherever the
/// request shows: the hooks' context, their log lines, the event records, the status.
@Suite struct RequestCauseTests {
    /// Logs in `didEnterBackground` and keeps the cause its hooks see.
    final class Witness: ApplicationService, Sendable {
        let seen = Mutex<[String?]>([])

        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            seen.withLock { $0.append(ServiceContext.current?.hostRequestCause) }
            application.logger.info("\(application.serviceName) to the background")
        }

        func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {
            seen.withLock { $0.append(ServiceContext.current?.hostRequestCause) }
        }
    }

    @Test("a sleep's cause reaches the hooks, their log lines, the records and the status; a plain request after it has none")
    func theCauseShowsWhereTheRequestShows() async throws {
        let witness = Witness()
        try await withTestHost([ServiceDescriptor(name: "w", service: witness)]) { host in
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            try await host.enterBackground(cause: "sleep")
            #expect(host.status.cause == "sleep")
            #expect(host.status.description.hasPrefix("background (sleep) · 1 service"), "\(host.status)")
            #expect(records.all.last { $0.event == .didEnterBackground }?.cause == "sleep")
            #expect(records.all.last { $0.event == .willResignActive }?.cause == "sleep")
            #expect(host.logs.all.last { $0.message == "w to the background" }?.metadata["cause"] == "sleep")
            try await host.enterForeground(cause: "resume")
            #expect(host.status.description.hasPrefix("active (resume) · 1 service"), "\(host.status)")
            #expect(records.all.last { $0.event == .didBecomeActive }?.cause == "resume")
            try await host.enterBackground()
            #expect(host.status.cause == nil)
            #expect(host.status.description.hasPrefix("background · 1 service"), "\(host.status)")
            #expect(records.all.last { $0.event == .didEnterBackground }?.cause == nil)
            #expect(host.logs.all.last { $0.message == "w to the background" }?.metadata["cause"] == nil)
            #expect(witness.seen.withLock { $0 }.suffix(3) == ["sleep", "resume", nil])
        }
    }

    @Test("a sleep that finds the host in the background moves nothing and keeps the cause of the move that put it there")
    func aSleepInTheBackgroundMovesNothing() async throws {
        let witness = Witness()
        try await withTestHost([ServiceDescriptor(name: "w", service: witness)]) { host in
            try await host.launched()
            try await host.enterBackground()
            #expect(try await host.enterBackground(cause: "sleep") == false)
            #expect(host.status.cause == nil, "no move: the host is in the background because of the signal before")
            #expect(witness.seen.withLock { $0 }.count == 2, "didBecomeActive at launch, one didEnterBackground")
        }
    }

    /// Publishes logind's screen lock from inside a background hook, as a lock that arrives
    /// during another request does; keeps the cause its protected-data hook sees.
    final class ScreenDuringRequest: ApplicationService, Sendable {
        let seen = Mutex<[String?]>([])

        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            application.bus.publish(SessionLockDidChange(isLocked: true, reason: "screen locked", cause: "screen-lock"))
        }

        func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
            seen.withLock { $0.append(ServiceContext.current?.hostRequestCause) }
        }
    }

    // Fails when the change takes the cause of the request it arrived in (nil, a signal's).
    @Test("a screen lock that arrives during another request is applied with its own cause, not the request's")
    func aLockDuringARequestKeepsItsCause() async throws {
        let service = ScreenDuringRequest()
        try await withTestHost([ServiceDescriptor(name: "s", service: service)]) { host in
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            try await host.enterBackground()
            #expect(service.seen.withLock { $0 } == ["screen-lock"])
            #expect(records.all.last { $0.event == .protectedDataWillBecomeUnavailable }?.cause == "screen-lock")
            #expect(host.status.cause == nil, "the state moved by the signal's request: \(host.status)")
        }
    }

    @Test("the service inside a hook is named while the loop waits for it")
    func theServiceInsideAHookIsNamed() async throws {
        let stuck = Stuck()
        try await withTestHost([ServiceDescriptor(name: "idle", service: IdleService()), ServiceDescriptor(name: "stuck", service: stuck)]) { host in
            try await host.launched()
            #expect(host.host.hookInProgress == nil)
            async let background: Bool = host.enterBackground(cause: "sleep")
            _ = try await host.waitForCall(.didEnterBackground, of: "stuck")
            let inside = try #require(host.host.hookInProgress)
            #expect(inside.service == "stuck" && inside.hook == "applicationDidEnterBackground")
            stuck.releaseHook()
            _ = try await background
            #expect(host.host.hookInProgress == nil)
        }
    }
}

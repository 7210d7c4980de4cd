import AppHost
import AppHostSystemd
import AppHostTestKit
import AppHostTestSupport
@testable import AppHostServices
import Foundation
import Testing

@Suite("analytics keeps what it has not flushed as restorable state")
struct AnalyticsRestoreTests {
    /// Runs a host on `directory` until `body` returns, then ends it as a SIGKILL would: no
    /// last calls, no flush, the running marker left behind.
    static func runAndKill(_ analytics: AnalyticsService, directory: String, storage: InMemoryRestorableStateStorage, _ body: (PluggableApplicationHost) async throws -> Void) async throws {
        let host = try PluggableApplicationHost(
            services: [ServiceDescriptor(name: "analytics", service: analytics)],
            configuration: .init(launchState: LaunchStateFiles(directory: directory + "/state"), restorableState: storage, stateDirectory: directory + "/state")
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try? await host.run() }
            try await host.launched()
            try await body(host)
            group.cancelAll()
        }
    }

    @Test("a kill before the flush loses no event: the next launch takes them back")
    func unflushedEventsSurviveAKill() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = InMemoryRestorableStateStorage()
        let first = try AnalyticsService(configuration: ServiceSection(["flush-interval": .string("1h")]))
        try await Self.runAndKill(first, directory: directory, storage: storage) { host in
            // The launch record is flushed by the run loop; the lock and unlock wait for the
            // next flush, an hour away.
            #expect(await storage.kept.first { $0.services["analytics"] == [] } != nil)
            try await host.setSessionLocked(true)
            try await host.setSessionLocked(false)
            #expect(storage.kept.all.last?.services["analytics"]?.isEmpty == false)
        }
        #expect(try AnalyticsReport.load(stateDirectory: directory + "/state").sessionLocks == 0, "not flushed before the kill")

        let second = try AnalyticsService(configuration: .empty)
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: second)], directory: directory, restorableState: storage) { _ in }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.sessionLocks == 1)
        #expect(report.launches == 2 && report.uncleanPreviousExits == 1)
    }

    @Test("a launch into the background after a kill there is no transition: two entries into the background count two, not three")
    func aLaunchIntoTheBackgroundIsNoTransition() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = InMemoryRestorableStateStorage()
        let first = try AnalyticsService(configuration: .empty)
        try await Self.runAndKill(first, directory: directory, storage: storage) { host in
            try await host.enterBackground()
            try await host.enterForeground()
            try await host.enterBackground()
        }
        let second = try AnalyticsService(configuration: .empty)
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: second)], directory: directory, restorableState: storage) { host in
            #expect(host.state == .background, "launched into the background, as it was killed")
            try await host.enterForeground()
        }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.backgroundEntries == 2 && report.foregroundEntries == 2, "\(report)")
        #expect(report.transitions == 4)
    }

    @Test("events both flushed and restored are counted once")
    func flushedAndRestoredEventsCountOnce() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage = InMemoryRestorableStateStorage()
        let first = try AnalyticsService(configuration: ServiceSection(["flush-interval": .string("1h")]))
        try await Self.runAndKill(first, directory: directory, storage: storage) { host in
            try await host.setSessionLocked(true)
        }
        let stale = try #require(storage.latest)
        #expect(stale.services["analytics"]?.isEmpty == false)

        // A clean run takes the lock back and flushes it; then a run restored from the stale
        // copy (as if the fd store were older than the disk) must not count it again.
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try AnalyticsService(configuration: .empty))], directory: directory, restorableState: InMemoryRestorableStateStorage(stale)) { _ in }
        try await withStatefulHost([ServiceDescriptor(name: "analytics", service: try AnalyticsService(configuration: .empty))], directory: directory, restorableState: InMemoryRestorableStateStorage(stale)) { _ in }
        let report = try AnalyticsReport.load(stateDirectory: directory + "/state")
        #expect(report.sessionLocks == 1)
        #expect(report.launches == 3)
    }

    @Test func aHookThatRecordsHandsOverWhatIsPending() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kept = TestLog<[UInt8]>()
        let analytics = try AnalyticsService(configuration: .empty)
        let handle = ApplicationHandle.testing(serviceName: "analytics", stateDirectory: directory, keepRestorableState: { kept.append($0) })
        _ = try await analytics.application(handle, willFinishLaunchingWithOptions: .testing())
        try await analytics.applicationWillEnterForeground(handle)
        let pending = try #require(kept.all.last)
        #expect(AnalyticsLog.scan(pending).events.map(\.kind) == [.foreground])
    }
}

@testable import AppHost
import Dispatch
import Synchronization
import Testing

/// A launch state whose commit is slow or fails, as a busy or full disk makes it; it records
/// what the host asked of it in the journal.
final class SlowDiskLaunchState: LaunchStateStorage {
    enum Commit: Sendable {
        /// Waits (up to ten seconds) until a launch hook has started, then succeeds.
        case waitForAHook(DispatchSemaphore)
        case fail(String)
    }

    let journal: Journal
    let commit: Commit

    init(journal: Journal, commit: Commit) {
        self.journal = journal
        self.commit = commit
    }

    func beginLaunch() throws -> LaunchOptions {
        journal.record("store:begin")
        return .init(kind: .firstLaunch, launchCount: 1, installationID: InstallationID(), previousExit: .none)
    }

    func commitLaunch(_ options: LaunchOptions) throws {
        switch commit {
        case .waitForAHook(let hookStarted):
            guard hookStarted.wait(timeout: .now() + 10) == .success else {
                throw TestError(description: "no launch hook ran while the commit was in progress")
            }
            journal.record("store:committed")
        case .fail(let reason):
            journal.record("store:commit failed")
            throw TestError(description: reason)
        }
    }

    func markCleanExit(of options: LaunchOptions) throws -> String? {
        journal.record("store:clean exit")
        return nil
    }
}

/// Signals a semaphore when its launch starts.
struct LaunchSignal: ApplicationService {
    let started: DispatchSemaphore

    func application(_ application: HostedApplication, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        started.signal()
        return true
    }
}

@Suite("The launch state is committed beside the launch hooks")
struct LaunchStateCommitTests {
    @Test("the services launch while the launch state is synced; the host becomes active after it")
    func servicesLaunchWhileTheCommitRuns() async throws {
        let journal = Journal()
        let hookStarted = DispatchSemaphore(value: 0)
        let host = try PluggableApplicationHost(
            services: [
                ServiceDescriptor(name: "signal", service: LaunchSignal(started: hookStarted)),
                descriptor(Recorder(name: "a", journal: journal)),
            ],
            configuration: .init(launchState: SlowDiskLaunchState(journal: journal, commit: .waitForAHook(hookStarted))),
            logger: quietLogger
        )
        let options = try await host.launch()
        #expect(options.launchCount == 1)
        let entries = journal.entries
        #expect(entries.first == "store:begin", "begin comes before any hook")
        let committed = try #require(entries.firstIndex(of: "store:committed"))
        let active = try #require(entries.firstIndex(of: "a:didBecomeActive"))
        #expect(committed < active, "the host becomes active only once the launch is on disk")
        await host.terminate()
        #expect(journal.entries.last == "store:clean exit")
    }

    @Test("a commit that fails fails the launch: the launched services are terminated in reverse, and no clean exit is recorded")
    func failedCommitFailsTheLaunch() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: ["a", "b"].map { descriptor(Recorder(name: $0, journal: journal)) },
            configuration: .init(launchState: SlowDiskLaunchState(journal: journal, commit: .fail("No space left on device"))),
            logger: quietLogger
        )
        await #expect(throws: LaunchFailure(service: "", hook: "", reason: .stateDirectory("No space left on device"))) {
            try await host.run()
        }
        #expect(journal.services(for: "didFinishLaunching") == ["a", "b"])
        #expect(journal.services(for: "didBecomeActive").isEmpty)
        #expect(journal.services(for: "willTerminate") == ["b", "a"])
        #expect(!journal.entries.contains("store:clean exit"), "the next launch must find the run unclean")
        #expect(host.state == .notRunning)
    }

    @Test("a required service that fails the launch still waits for the commit; its failure is the one reported")
    func serviceFailureWaitsForTheCommit() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "b", journal: journal, didFinish: .refuse))],
            configuration: .init(launchState: SlowDiskLaunchState(journal: journal, commit: .fail("EIO"))),
            logger: quietLogger
        )
        await #expect(throws: LaunchFailure(service: "b", hook: "applicationDidFinishLaunching", reason: .refused)) {
            try await host.run()
        }
        let entries = journal.entries
        let failed = try #require(entries.firstIndex(of: "store:commit failed"))
        let terminated = try #require(entries.firstIndex(of: "a:willTerminate"))
        #expect(failed < terminated, "the rollback starts once the commit returned")
    }
}

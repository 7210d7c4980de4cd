@testable import AppHost
import AppHostTestKit
import Synchronization
import Testing

/// A counter that keeps its count as restorable state: one byte, bumped by every hook the host
/// asks to save (background, memory warning, terminate) and on request from its run loop.
private final class Tally: ApplicationService {
    let count = Mutex<UInt8>(0)
    let restored = Mutex<[[UInt8]?]>([])
    let lockedAtLaunch = Mutex<Bool?>(nil)
    let bumps: AsyncStream<Void>
    let bump: AsyncStream<Void>.Continuation

    init() { (bumps, bump) = AsyncStream.makeStream() }

    private func save(_ application: ApplicationHandle) {
        application.keepRestorableState([count.withLock { $0 += 1; return $0 }])
    }

    func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        restored.withLock { $0.append(options.restoredState) }
        count.withLock { $0 = options.restoredState?.first ?? 0 }
        lockedAtLaunch.withLock { $0 = application.isSessionLocked }
        return true
    }

    func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        restored.withLock { $0.append(options.restoredState) }
        return true
    }

    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws { save(application) }
    func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws { save(application) }
    func applicationWillTerminate(_ application: ApplicationHandle) async throws { save(application) }
    func run(_ application: ApplicationHandle) async throws {
        for await _ in bumps { save(application) }
    }
}

/// Says how the previous run ended, as the daemon's state files would.
private struct PreviousRun: LaunchStateStorage {
    let exit: LaunchOptions.PreviousExit
    var cause: ExitCause?
    func beginLaunch() throws -> LaunchOptions { .testing(launchCount: 2, previousExit: exit, previousExitCause: cause) }
    func markCleanExit(of options: LaunchOptions) throws -> String? { nil }
}

private func configuration(_ storage: InMemoryRestorableStateStorage, previousExit: LaunchOptions.PreviousExit = .clean, cause: ExitCause? = nil) -> PluggableApplicationHost.Configuration {
    .init(hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), launchState: PreviousRun(exit: previousExit, cause: cause), restorableState: storage)
}

@Suite struct RestorableStateTests {
    @Test func aServiceGetsItsBytesBackInBothLaunchStepsAndItsHandle() async throws {
        let tally = Tally()
        let storage = InMemoryRestorableStateStorage(services: ["tally": [7], "other": [1, 2]])
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)], configuration: configuration(storage)) { host in
            let options = try await host.launched()
            #expect(tally.restored.withLock { $0 } == [[7], [7]])
            #expect(options.restoredState == nil, "the host's own options carry no service's bytes")
        }
    }

    @Test func bytesKeptInDidEnterBackgroundAreKeptBeforeTheRequestReturnsAndWrittenToDisk() async throws {
        let tally = Tally()
        let storage = InMemoryRestorableStateStorage()
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)], configuration: configuration(storage)) { host in
            try await host.launched()
            let keptAtLaunch = storage.kept.count
            try await host.enterBackground()
            let kept = try #require(storage.kept.all.last)
            #expect(storage.kept.count == keptAtLaunch + 1, "one keep for the whole request")
            #expect(kept.services == ["tally": [1]])
            #expect(kept.isInBackground && kept.isSessionLocked == false)
            #expect(storage.persisted.all.last == kept, "the background is written to disk too")
        }
    }

    @Test func aRequestThatChangesNothingKeepsNothing() async throws {
        let storage = InMemoryRestorableStateStorage()
        try await withTestHost([ServiceDescriptor(name: "quiet", service: Tally.Quiet())], configuration: configuration(storage)) { host in
            try await host.launched()
            let kept = storage.kept.count
            try await host.receiveMemoryWarning(level: .warning)
            await host.host.setNote("hello")
            #expect(storage.kept.count == kept)
        }
    }

    @Test func bytesKeptFromTheRunLoopAreKeptOnTheirOwnButNotWrittenToDiskWhileActive() async throws {
        let tally = Tally()
        let storage = InMemoryRestorableStateStorage()
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)], configuration: configuration(storage)) { host in
            try await host.launched()
            let persisted = storage.persisted.count
            tally.bump.yield()
            #expect(await storage.kept.first { $0.services["tally"] == [1] } != nil)
            #expect(storage.persisted.count == persisted, "the fd store only; the disk at background and terminate")
        }
    }

    @Test func willTerminateBytesAreKeptAndPersisted() async throws {
        let tally = Tally()
        let storage = InMemoryRestorableStateStorage(services: ["tally": [4]])
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)], configuration: configuration(storage)) { host in
            _ = try await host.launched()
        }
        #expect(storage.kept.all.last?.services["tally"] == [5])
        #expect(storage.persisted.all.last?.services["tally"] == [5])
        #expect(storage.latest?.generation ?? 0 > 1, "generations count on from the restored one")
    }

    @Test func anUncleanExitInTheBackgroundLaunchesIntoTheBackgroundWithTheSessionLocked() async throws {
        let tally = Tally()
        let storage = InMemoryRestorableStateStorage(services: ["tally": [2]], isInBackground: true, isSessionLocked: true, sessionLockReason: "entered background")
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)], configuration: configuration(storage, previousExit: .unclean, cause: .watchdog)) { host in
            let options = try await host.launched()
            #expect(options.previousExitCause == .watchdog)
            #expect(host.logs.messages.contains("launch 2; the previous run ended: watchdog"))
            #expect(options.launchesIntoBackground)
            #expect(host.state == .background)
            #expect(host.events(of: "tally") == [.willFinishLaunching, .didFinishLaunching, .didEnterBackground])
            #expect(tally.lockedAtLaunch.withLock { $0 } == true, "a locked session stays locked: no secret read at launch")
            #expect(host.status.sessionLockReason == "entered background")
            #expect(host.logs.messages.contains("restored after an unclean exit (watchdog): background, session locked, the state of 1 service"), "one, not \"1 services\": \(host.logs.messages)")
            try await host.enterForeground()
            #expect(host.events(of: "tally").suffix(2) == [.willEnterForeground, .didBecomeActive])
        }
    }

    @Test func aCleanExitStartsFreshButGivesTheBytesBack() async throws {
        let tally = Tally()
        let storage = InMemoryRestorableStateStorage(services: ["tally": [2]], isInBackground: true, isSessionLocked: true, sessionLockReason: "entered background")
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)], configuration: configuration(storage, previousExit: .clean)) { host in
            let options = try await host.launched()
            #expect(!options.launchesIntoBackground)
            #expect(host.state == .active)
            #expect(host.status.sessionLockReason == nil)
            #expect(host.events(of: "tally").last == .didBecomeActive)
            #expect(tally.restored.withLock { $0.first } == [2])
        }
    }

    @Test func bytesOfServicesNoLongerConfiguredAreDropped() async throws {
        let storage = InMemoryRestorableStateStorage(services: ["gone": [9], "tally": [1]])
        try await withTestHost([ServiceDescriptor(name: "tally", service: Tally())], configuration: configuration(storage)) { host in
            try await host.launched()
            #expect(storage.kept.all.last?.services.keys.sorted() == ["tally"])
        }
    }

    @Test("state over the 1 MiB a reader takes back is not kept: the last copy that fit stays, and the log names the largest service")
    func oversizedStateKeepsTheLastCopyThatFit() async throws {
        let storage = InMemoryRestorableStateStorage()
        let logs = CapturedLogs()
        let big = Tally.Big()
        try await withTestHost([ServiceDescriptor(name: "big", service: big)], configuration: configuration(storage), logs: logs) { host in
            try await host.launched()
            #expect(storage.kept.all.last?.services["big"] == [1])
            try await host.enterBackground()
            #expect(storage.kept.all.last?.services["big"] == [1])
            #expect(logs.messages.contains { $0.hasPrefix("could not keep the restorable state: restorable state of") && $0.contains("(largest: big, 2097152 bytes)") })
        }
    }

    @Test("a service a reload restarts gets the bytes it kept last, not those of the process's start")
    func aServiceRestartedByAReloadGetsItsLatestBytes() async throws {
        let first = Tally()
        let second = Tally()
        let storage = InMemoryRestorableStateStorage(services: ["tally": [2]])
        try await withTestHost([ServiceDescriptor(name: "tally", service: first)], configuration: configuration(storage)) { host in
            try await host.launched()
            try await host.enterBackground()
            #expect(first.count.withLock { $0 } == 3)
            try await host.reload([ServiceDescriptor(name: "tally", configuration: ["changed": true]) { second }])
            // The old instance's willTerminate kept 4 on its way out.
            #expect(second.restored.withLock { $0 } == [[4], [4]])
        }
    }

    @Test func withoutAStorageKeepingIsHarmless() async throws {
        let tally = Tally()
        try await withTestHost([ServiceDescriptor(name: "tally", service: tally)]) { host in
            try await host.launched()
            try await host.enterBackground()
            #expect(tally.count.withLock { $0 } == 1)
        }
    }

    @Test func aServiceTestedAloneHandsItsBytesToTheTestHandle() async throws {
        let kept = Mutex<[[UInt8]]>([])
        let tally = Tally()
        try await tally.applicationDidEnterBackground(.testing(keepRestorableState: { bytes in kept.withLock { $0.append(bytes) } }))
        #expect(kept.withLock { $0 } == [[1]])
    }
}

extension Tally {
    /// A service that keeps nothing.
    struct Quiet: ApplicationService {}

    /// Keeps one byte at launch and 2 MiB in the background.
    struct Big: ApplicationService {
        func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            application.keepRestorableState([1])
            return true
        }

        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            application.keepRestorableState([UInt8](repeating: 2, count: 2 << 20))
        }
    }
}

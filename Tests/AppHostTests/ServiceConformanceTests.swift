@testable import AppHost
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import AppHostTestSupport
import Testing

@Suite struct ServiceConformanceTests {
    @Test func gracefulShutdownOfTheGroupTerminatesEveryService() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: ["a", "b", "c"].map { descriptor(Recorder(name: $0, journal: journal, hasRunLoop: true)) },
            logger: quietLogger
        )
        try await testGracefulShutdown { trigger in
            let group = ServiceGroup(configuration: .init(services: [host], logger: quietLogger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                #expect(await journal.wait(for: "c:run.start"))
                #expect(host.state == .active)
                trigger.triggerGracefulShutdown()
                try await tasks.next()
            }
        }
        #expect(journal.services(for: "willTerminate") == ["c", "b", "a"])
        #expect(Set(journal.services(for: "run.cancelled")) == ["a", "b", "c"])
        #expect(host.state == .notRunning)
    }

    @Test func runLoopsStartAfterLaunchAndStopAtTerminate() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal, hasRunLoop: true)),
                descriptor(Recorder(name: "off", journal: journal, willFinish: .refuse, hasRunLoop: true), required: false),
            ],
            logger: quietLogger
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            #expect(await journal.wait(for: "a:run.start"))
            let entries = journal.entries
            let launched = try #require(entries.firstIndex(of: "a:didFinishLaunching"))
            let started = try #require(entries.firstIndex(of: "a:run.start"))
            #expect(launched < started, "run starts once the service launched")
            #expect(await journal.wait(for: "a:didBecomeActive"))
            #expect(journal.entries.firstIndex(of: "a:didBecomeActive")! > started, "and before its first didBecomeActive")
            #expect(!entries.contains("a:run.cancelled"))

            await host.terminate()
            try await group.waitForAll()
        }
        let after = journal.entries
        let terminated = try #require(after.firstIndex(of: "a:willTerminate"))
        let cancelled = try #require(after.firstIndex(of: "a:run.cancelled"))
        #expect(terminated < cancelled, "run is cancelled after willTerminate")
        #expect(!after.contains("off:run.start"), "a disabled service does not run")
    }

    @Test("cancelling run() stops the host at once: no last calls, and the next launch sees an unclean exit")
    func cancellingRunStopsAtOnce() async throws {
        let journal = Journal()
        let launchState = InMemoryLaunchState()
        let host = try PluggableApplicationHost(
            services: [descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "b", journal: journal))],
            configuration: .init(launchState: launchState),
            logger: quietLogger
        )
        let (runEnds, runEnded) = AsyncStream<Void>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                _ = try? await host.run()
                runEnded.finish()
            }
            #expect(await journal.wait(for: "b:didBecomeActive"))
            group.cancelAll()
            let ended = await completes(within: .seconds(5)) { for await _ in runEnds {} }
            #expect(ended, "run() did not end after cancellation")
            // Ends a run that ignored the cancellation, so the group does not wait for it forever.
            if !ended { await host.terminate() }
        }
        #expect(journal.services(for: "willTerminate").isEmpty)
        #expect(host.state == .notRunning)
        let next = try PluggableApplicationHost(services: [], configuration: .init(launchState: launchState), logger: quietLogger)
        try await next.withRunning {
            let options = try await next.launched()
            #expect(options.previousExit == .unclean)
        }
    }

    @Test func launchFailureEndsRunWithTheFailure() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "b", journal: journal, didFinish: .refuse))],
            logger: quietLogger
        )
        await #expect(throws: LaunchFailure(service: "b", hook: "applicationDidFinishLaunching", reason: .refused)) {
            try await host.run()
        }
        #expect(journal.services(for: "willTerminate") == ["a"])
    }

    @Test func sessionLockMessagesDriveProtectedData() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: ["a", "b"].map { descriptor(Recorder(name: $0, journal: journal, hasRunLoop: true)) },
            logger: quietLogger
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            // Run loops start after the host subscribed to lock changes.
            #expect(await journal.wait(for: "b:run.start"))
            host.bus.publish(SessionLockDidChange(isLocked: true, reason: "test"))
            #expect(await journal.wait(for: "a:protectedDataWillBecomeUnavailable"))
            #expect(journal.services(for: "protectedDataWillBecomeUnavailable") == ["b", "a"])
            await host.terminate()
            try await group.waitForAll()
        }
    }
}

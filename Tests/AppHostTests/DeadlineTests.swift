import Synchronization
@testable import AppHost
import AppHostTestSupport
import Testing

@Suite struct DeadlineTests {
    @Test func stuckHookIsNamedAndLaterEventsWaitBehindIt() async throws {
        let journal = Journal()
        let latch = Latch()
        let probe = ConcurrencyProbe()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "first", journal: journal)),
                descriptor(Recorder(name: "second", journal: journal)),
                descriptor(Recorder(name: "stuck", journal: journal, hangs: ["didEnterBackground": latch], probe: probe), deadline: .milliseconds(100)),
                descriptor(Recorder(name: "last", journal: journal)),
            ],
            configuration: .init(hookDeadline: .seconds(30)),
            logger: quietLogger
        )
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            try await host.launched()
            _ = journal.drain()

            let clock = ContinuousClock()
            let start = clock.now
            #expect(try await host.enterBackground())
            // Under the host's 30 s deadline: the service's own 100 ms one applied. Generous, so a
            // loaded machine passes.
            #expect(clock.now - start < .seconds(10), "the host waited for the stuck hook")
            #expect(journal.services(for: "didEnterBackground") == ["last", "stuck", "second", "first"])
            let status = host.status
            #expect(status.state == .background)
            #expect(status.lastOverrun == Overrun(service: "stuck", hook: "applicationDidEnterBackground", deadline: .milliseconds(100)))
            #expect(status.description.contains("stuck overran applicationDidEnterBackground (100ms)"))
            _ = journal.drain()

            #expect(try await host.enterForeground())
            let foreground = journal.drain()
            #expect(foreground == ["first:willEnterForeground", "second:willEnterForeground", "last:willEnterForeground",
                                   "first:didBecomeActive", "second:didBecomeActive", "last:didBecomeActive"],
                    "stuck must not get foreground events while its background hook runs")

            latch.open()
            #expect(await journal.wait(for: "stuck:didBecomeActive"))
            #expect(journal.drain() == ["stuck:willEnterForeground", "stuck:didBecomeActive"])
            #expect(probe.maximum == 1, "two hooks of one service ran at once")
            // stuck may still be finishing didBecomeActive: its willTerminate then queues behind it.
            await host.terminate()
            #expect(await journal.wait(for: "stuck:willTerminate"))
            #expect(Set(journal.services(for: "willTerminate")) == ["last", "stuck", "second", "first"])
            #expect(probe.maximum == 1)
        }
    }

    @Test func hostDeadlineAppliesWithoutOverride() async throws {
        let journal = Journal()
        let latch = Latch()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "b", journal: journal, hangs: ["didReceiveMemoryWarning.warning": latch])),
                descriptor(Recorder(name: "c", journal: journal)),
            ],
            // A second: the healthy hooks of a and c never come near it on a loaded machine (at
            // 50 ms they could, and the last overrun would name them); b's held hook passes it.
            configuration: .init(hookDeadline: .seconds(1)),
            logger: quietLogger
        )
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            try await host.launched()
            try await host.receiveMemoryWarning(level: .warning)
            #expect(journal.services(for: "didReceiveMemoryWarning.warning") == ["a", "b", "c"])
            #expect(host.status.lastOverrun == Overrun(service: "b", hook: "applicationDidReceiveMemoryWarning", deadline: .seconds(1)))
        }
    }

    @Test func stuckTerminateDoesNotHoldUpShutdown() async throws {
        let journal = Journal()
        let latch = Latch()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "b", journal: journal, hangs: ["willTerminate": latch])),
            ],
            configuration: .init(terminateDeadline: .milliseconds(100)),
            logger: quietLogger
        )
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            try await host.launched()
            await host.terminate()
            #expect(journal.services(for: "willTerminate") == ["b", "a"])
            #expect(host.state == .notRunning)
        }
    }

    /// A service that blocks its thread in every hook: the pool may have no thread left for
    /// the host's deadline timer until it returns.
    struct BlockingService: ApplicationService {
        let blockFor: Duration
        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            let end = ContinuousClock.now + blockFor
            while ContinuousClock.now < end {}
        }
    }

    /// Answers its launch hooks as told and counts the calls.
    final class LaunchAnswers: ApplicationService {
        let willFinish: Bool
        let calls = Mutex<[String]>([])
        init(willFinish: Bool) { self.willFinish = willFinish }
        func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            calls.withLock { $0.append("willFinishLaunching") }
            return willFinish
        }
        func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            calls.withLock { $0.append("didFinishLaunching") }
            return true
        }
    }

    @Test("a launch's run makes no call after one that refused or overran; one that went on makes both")
    func launchRunStopsAtFailure() async {
        let application = ApplicationHandle(
            serviceName: "s", logger: quietLogger, configuration: ServiceSection([:]), bus: MessageBus(),
            state: .notRunning, launchOptions: nil, isSessionLocked: false, stateDirectory: nil, serviceCount: 1
        )
        let options = LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: .init(), previousExit: .none)
        func launch(_ service: any ApplicationService, deadline: Duration = .seconds(10)) async -> [HookResult] {
            let run = HookRun(token: 1, calls: [
                HookCall(serviceID: 1, service: service, hook: .willFinishLaunching(options), application: application, deadline: deadline),
                HookCall(serviceID: 1, service: service, hook: .didFinishLaunching(options), application: application, deadline: deadline),
            ], stopsAtFailure: true)
            let (_, continuation) = AsyncStream.makeStream(of: HostInput.self)
            await run.perform(answers: continuation)
            return run.results
        }
        let refusing = LaunchAnswers(willFinish: false)
        #expect(await launch(refusing) == [.returned(false), .skipped])
        #expect(refusing.calls.withLock { $0 } == ["willFinishLaunching"])

        let going = LaunchAnswers(willFinish: true)
        #expect(await launch(going) == [.returned(true), .returned(true)])
        #expect(going.calls.withLock { $0 } == ["willFinishLaunching", "didFinishLaunching"])

        // Answered, but past its deadline: an overrun ends the launch as a refusal does.
        #expect(await launch(LaunchAnswers(willFinish: true), deadline: .zero) == [.overran(.zero), .skipped])
    }

    @Test("a call that answers after its deadline counts as overrun even when no timer woke the host in time")
    func lateAnswerWithoutATimerWakeIsAnOverrun() async {
        let application = ApplicationHandle(
            serviceName: "blocking", logger: quietLogger, configuration: ServiceSection([:]), bus: MessageBus(),
            state: .inactive, launchOptions: nil, isSessionLocked: false, stateDirectory: nil, serviceCount: 1
        )
        let slow = HookCall(serviceID: 1, service: BlockingService(blockFor: .milliseconds(60)), hook: .event(.didEnterBackground), application: application, deadline: .milliseconds(10))
        let quick = HookCall(serviceID: 2, service: BlockingService(blockFor: .zero), hook: .event(.didEnterBackground), application: application, deadline: .seconds(10))
        // No loop watches this run: it stands for a host whose timer never got a thread.
        let run = HookRun(token: 1, calls: [slow, quick])
        let (stream, continuation) = AsyncStream.makeStream(of: HostInput.self)
        await run.perform(answers: continuation)
        continuation.finish()
        #expect(run.results == [.overran(.milliseconds(10)), .returned(true)])
        var inputs = stream.makeAsyncIterator()
        guard case .runFinished(token: 1)? = await inputs.next() else {
            Issue.record("the run did not report that it finished")
            return
        }
    }
}

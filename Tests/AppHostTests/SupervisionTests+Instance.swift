import AppHost
import AppHostTestKit
import Synchronization
import Testing

/// A service whose run loop waits for `failNow` and then throws; the instant each of its starts
/// and hooks happened, by its own instance number.
final class TriggeredFailure: ApplicationService, Sendable {
    let number: Int
    let trigger: AsyncStream<Void>?
    let restored = Mutex<[UInt8]?>(nil)
    let starts = TestLog<ContinuousClock.Instant>()

    init(number: Int, trigger: AsyncStream<Void>?) {
        self.number = number
        self.trigger = trigger
    }

    func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        restored.withLock { $0 = options.restoredState }
        application.keepRestorableState([UInt8(number)])
        return true
    }

    func run(_ application: ApplicationHandle) async throws {
        starts.append(.now)
        if let trigger {
            for await _ in trigger { throw FlakyRunLoop.Failure() }
        }
        let (stopped, keeper) = AsyncStream<Never>.makeStream()
        for await _ in stopped {}
        keeper.finish()
    }
}

extension SupervisionTests {
    @Test("restart-scope: instance: willTerminate to the old instance, a new one with its restorable state, launched and brought to the background and the locked session as a reload brings one, in its place")
    func instanceRestart() async throws {
        let (trigger, failNow) = AsyncStream<Void>.makeStream()
        let instances = Mutex<[TriggeredFailure]>([])
        var cache = ServiceDescriptor(name: "cache", type: "cache") {
            instances.withLock { made in
                // Only the first instance fails.
                let instance = TriggeredFailure(number: made.count + 1, trigger: made.isEmpty ? trigger : nil)
                made.append(instance)
                return instance
            }
        }
        cache.restart = Self.policy(.transient, delay: .milliseconds(1), scope: .instance)
        let services = [ServiceDescriptor(name: "a", service: Idle()), cache, ServiceDescriptor(name: "b", service: Idle())]
        let configuration = PluggableApplicationHost.Configuration(
            hookDeadline: .seconds(5), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), restorableState: InMemoryRestorableStateStorage()
        )
        try await withTestHost(services, configuration: configuration) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            #expect(try await host.enterBackground())
            #expect(try await host.setSessionLocked(true, reason: "test"))
            failNow.yield()
            let restart = await restarts.first { _ in true }
            #expect(restart == ServiceDidRestart(service: "cache", restarts: 1, scope: .instance, error: "lost the connection"))
            _ = try await host.receiveMemoryWarning()
            let made = instances.withLock { $0 }
            try #require(made.count == 2)
            #expect(made[1].restored.withLock { $0 } == [1], "the new instance got what the old one kept")
            let events = host.events(of: "cache")
            let restarted = try #require(events.lastIndex(of: .willTerminate))
            #expect(Array(events[restarted...]) == [.willTerminate, .willFinishLaunching, .didFinishLaunching, .didEnterBackground, .protectedDataWillBecomeUnavailable, .didReceiveMemoryWarning(.warning)], "\(events)")
            #expect(host.status.services.map(\.name) == ["a", "cache", "b"], "in its place in the order")
            #expect(host.status.services[1].restarts == 1)
            #expect(host.state == .background)
        }
    }

    @Test("a restart waits for the request in progress: the run loop starts again only after its hooks returned")
    func aRestartWaitsForTheRequest() async throws {
        let (trigger, failNow) = AsyncStream<Void>.makeStream()
        let hookReturned = Mutex<ContinuousClock.Instant?>(nil)
        struct Slow: ApplicationService {
            let failNow: AsyncStream<Void>.Continuation
            let returned: @Sendable () -> Void
            func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
                failNow.yield()
                // Long past the 1 ms restart delay: a restart inside the request would start now.
                try await Task.sleep(for: .milliseconds(200))
                returned()
            }
        }
        let failing = TriggeredFailure(number: 1, trigger: trigger)
        var flaky = ServiceDescriptor(name: "flaky", service: failing)
        flaky.restart = Self.policy(.transient, delay: .milliseconds(1))
        let slow = ServiceDescriptor(name: "slow", service: Slow(failNow: failNow) { hookReturned.withLock { $0 = .now } })
        try await withTestHost([flaky, slow]) { host in
            let restarts = host.deliveries(of: ServiceDidRestart.self)
            try await host.launched()
            let background = host.deliveries(of: LifecycleEventRecord.self)
            #expect(try await host.enterBackground())
            let restart = await restarts.first { _ in true }
            let returned = try #require(hookReturned.withLock { $0 })
            let starts = failing.starts.all
            try #require(starts.count == 2)
            #expect(starts[1] > returned, "restarted \(starts[1] - returned) after the hook returned")
            let enteredBackground = background.all.first { $0.message.event == .didEnterBackground }
            #expect(restart?.requestID != nil, "a request of its own")
            #expect(restart?.requestID != enteredBackground?.requestID)
        }
    }

    @Test("a restart that meets a reload waits for it: the run loop starts again only after the reload's hooks returned")
    func aRestartWaitsForAReload() async throws {
        let (trigger, failNow) = AsyncStream<Void>.makeStream()
        let hookReturned = Mutex<ContinuousClock.Instant?>(nil)
        struct Updating: ApplicationService {
            let failNow: AsyncStream<Void>.Continuation
            let returned: @Sendable () -> Void
            func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
                failNow.yield()
                try await Task.sleep(for: .milliseconds(200))
                returned()
                return .applied
            }
        }
        let failing = TriggeredFailure(number: 1, trigger: trigger)
        var flaky = ServiceDescriptor(name: "flaky", service: failing)
        flaky.restart = Self.policy(.transient, delay: .milliseconds(1))
        let updating = Updating(failNow: failNow) { hookReturned.withLock { $0 = .now } }
        let before = ServiceDescriptor(name: "slow", type: "slow", configuration: ServiceSection(["level": "a"])) { updating }
        let after = ServiceDescriptor(name: "slow", type: "slow", configuration: ServiceSection(["level": "b"])) { updating }
        try await withTestHost([flaky, before]) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            #expect(try await host.reload([flaky, after]).updated == ["slow"])
            #expect(await restarts.first { _ in true } != nil)
            let returned = try #require(hookReturned.withLock { $0 })
            let starts = failing.starts.all
            try #require(starts.count == 2)
            #expect(starts[1] > returned, "restarted \(starts[1] - returned) after the reload's hook returned")
        }
    }
}

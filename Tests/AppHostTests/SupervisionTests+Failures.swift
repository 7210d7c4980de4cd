import AppHost
import AppHostTestKit
import AppHostTestSupport
import Synchronization
import Testing

extension SupervisionTests {
    // Fails on a host whose supervisor stays due after the new instance failed: the loop then
    // builds it again and again and takes no other input.
    @Test("an instance restart whose new instance cannot be built disables the service once; the host takes its next request")
    func aFailedInstanceRestartIsNotRetried() async throws {
        struct Unbuildable: Error {}
        let (trigger, failNow) = AsyncStream<Void>.makeStream()
        let built = Mutex(0)
        var cache = ServiceDescriptor(name: "cache", type: "cache", isRequired: false) {
            try built.withLock { count in
                count += 1
                if count > 1 { throw Unbuildable() }
            }
            return TriggeredFailure(number: 1, trigger: trigger)
        }
        cache.restart = Self.policy(.transient, delay: .milliseconds(1), scope: .instance)
        try await withTestHost([cache]) { host in
            try await host.launched()
            failNow.yield()
            _ = await host.logs.first { $0.message.hasPrefix("cache could not be built again") }
            let answered = await completes(within: .seconds(10)) { _ = try? await host.receiveMemoryWarning() }
            #expect(answered, "the host took no further request")
            #expect(built.withLock { $0 } == 2)
            #expect(host.logs.messages.filter { $0.hasPrefix("cache could not be built again") }.count == 1)
            #expect(host.status.services[0].isEnabled == false)
        }
    }

    // Fails on a host that arms the second restart's wake only when some other input comes.
    @Test("two restarts waiting at once, the later armed while the earlier's wake was pending: both happen with nothing else coming in")
    func twoWaitingRestartsBothHappen() async throws {
        let (trigger, failNow) = AsyncStream<Void>.makeStream()
        var early = ServiceDescriptor(name: "early", service: FlakyRunLoop(failures: 1))
        early.restart = Self.policy(.transient, delay: .milliseconds(200))
        var late = ServiceDescriptor(name: "late", service: TriggeredFailure(number: 1, trigger: trigger))
        late.restart = Self.policy(.transient, delay: .milliseconds(400))
        try await withTestHost([early, late]) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            // early failed at its start: its wake is armed for +200 ms; late fails now, its
            // wake (+400 ms) behind that one.
            _ = await host.logs.first { $0.message.hasPrefix("early restarting in") }
            failNow.yield()
            // Due 400 ms from now; the bound is generous, but shorter than the next wake the
            // test host has for other reasons (its 5 s deadlines), which hid a lost one.
            let both = await restarts.first(timeout: .seconds(3)) { _ in restarts.all.map(\.service).sorted() == ["early", "late"] }
            #expect(both != nil, "restarted: \(restarts.all.map(\.service))")
        }
    }
}

import AppHost
import AppHostTestSupport
import Testing

@Suite struct MessageBusTests {
    struct Ping: Sendable, Equatable { let value: Int }
    struct Pong: Sendable, Equatable { let value: Int }

    @Test func deliversByTypeInOrder() async {
        let bus = MessageBus()
        let pings = bus.subscribe(to: Ping.self)
        let pongs = bus.subscribe(to: Pong.self)
        let morePings = bus.subscribe(to: Ping.self)
        for value in 0..<100 {
            bus.publish(Ping(value: value))
            if value % 10 == 0 { bus.publish(Pong(value: value)) }
        }
        bus.publish("a string nobody subscribed to")

        var received: [Int] = []
        for await ping in pings {
            received.append(ping.value)
            if received.count == 100 { break }
        }
        #expect(received == Array(0..<100))

        var second: [Int] = []
        for await ping in morePings {
            second.append(ping.value)
            if second.count == 100 { break }
        }
        #expect(second == Array(0..<100))

        var pongValues: [Int] = []
        for await pong in pongs {
            pongValues.append(pong.value)
            if pongValues.count == 10 { break }
        }
        #expect(pongValues == Array(stride(from: 0, to: 100, by: 10)))
    }

    @Test func slowSubscriberDoesNotBlockPublisher() async {
        let bus = MessageBus()
        let slow = bus.subscribe(to: Ping.self)  // never read while publishing
        let clock = ContinuousClock()
        let start = clock.now
        for value in 0..<10_000 { bus.publish(Ping(value: value)) }
        #expect(clock.now - start < .seconds(2))
        // Everything is still there, in order, for when it reads.
        var count = 0
        var inOrder = true
        for await ping in slow {
            if ping.value != count { inOrder = false }
            count += 1
            if count == 10_000 { break }
        }
        #expect(count == 10_000)
        #expect(inOrder)
    }

    @Test func subscriptionEndsWithItsStream() async {
        let bus = MessageBus()
        do {
            let stream = bus.subscribe(to: Ping.self)
            #expect(bus.subscriberCount(for: Ping.self) == 1)
            bus.publish(Ping(value: 1))
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == Ping(value: 1))
        }
        #expect(bus.subscriberCount(for: Ping.self) == 0, "dropping the stream unsubscribes")

        await withTaskGroup(of: Int.self) { group in
            // Immediate: the reader subscribes before addImmediateTask returns, so no wait is needed.
            group.addImmediateTask {
                var seen = 0
                for await _ in bus.subscribe(to: Pong.self) { seen += 1 }
                return seen
            }
            #expect(bus.subscriberCount(for: Pong.self) == 1)
            group.cancelAll()
            _ = await group.next()
        }
        #expect(bus.subscriberCount(for: Pong.self) == 0, "cancelling the reader unsubscribes")
        bus.publish(Pong(value: 2))
    }

    @Test("inputs: several message types in one stream, in publish order; ending the stream unsubscribes them all")
    func inputsRelaySeveralTypesInOrder() async {
        enum Input: Equatable { case ping(Int), pong(Int) }
        let bus = MessageBus()
        do {
            let (stream, _) = bus.inputs { (inputs: BusInputs<Input>) in
                inputs.relay(Ping.self) { .ping($0.message.value) }
                inputs.relay(Pong.self) { $0.message.value < 0 ? nil : .pong($0.message.value) }
            }
            #expect(bus.subscriberCount(for: Ping.self) == 1 && bus.subscriberCount(for: Pong.self) == 1)
            bus.publish(Pong(value: 1))
            bus.publish(Ping(value: 2))
            bus.publish(Pong(value: -1))
            bus.publish(Pong(value: 3))
            var iterator = stream.makeAsyncIterator()
            var seen: [Input] = []
            for _ in 0..<3 { if let input = await iterator.next() { seen.append(input) } }
            #expect(seen == [.pong(1), .ping(2), .pong(3)])
        }
        #expect(bus.subscriberCount(for: Ping.self) == 0 && bus.subscriberCount(for: Pong.self) == 0, "dropping the stream unsubscribes both")
    }

    @Test func hostPublishesLifecycleRecords() async throws {
        let journal = Journal()
        let host = try makeHost(["a", "b"], journal: journal)
        let records = host.bus.subscribe(to: LifecycleEventRecord.self)
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
        }
        var seen: [String] = []
        for await record in records {
            seen.append("\(record.event.name):\(record.from)>\(record.to):\(record.serviceCount)")
            if record.event == .willTerminate { break }
        }
        #expect(seen == [
            "didFinishLaunching:notRunning>launching:2",
            "didBecomeActive:launching>active:2",
            "willResignActive:active>inactive:2",
            "didEnterBackground:inactive>background:2",
            "willTerminate:terminating>notRunning:2",
        ])
    }
}

/// A service that subscribes in `run(_:)` hears what another service publishes during the first
/// `didBecomeActive`: run loops start before it.
@Suite struct RunLoopSubscriptionTests {
    struct Hello: Sendable, Equatable { let from: String }

    /// Says hello on the bus when it becomes active.
    struct Greeter: ApplicationService {
        func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {
            application.bus.publish(Hello(from: application.serviceName))
        }
    }

    /// Subscribes in its run loop and passes on the first hello it hears.
    struct Listener: ApplicationService {
        let heard: AsyncStream<Hello>.Continuation
        func run(_ application: ApplicationHandle) async throws {
            for await hello in application.bus.subscribe(to: Hello.self) {
                heard.yield(hello)
            }
        }
    }

    @Test("a service subscribing in run(_:) hears what another service publishes in the first didBecomeActive", arguments: [true, false])
    func runLoopHearsTheFirstDidBecomeActive(listenerFirst: Bool) async throws {
        let (heard, continuation) = AsyncStream<Hello>.makeStream()
        let listener = ServiceDescriptor(name: "listener", service: Listener(heard: continuation))
        let greeter = ServiceDescriptor(name: "greeter", service: Greeter())
        let host = try PluggableApplicationHost(services: listenerFirst ? [listener, greeter] : [greeter, listener])
        try await host.withRunning {
            try await host.launched()
            var iterator = heard.makeAsyncIterator()
            #expect(await iterator.next() == Hello(from: "greeter"))
        }
    }
}

import Synchronization
import ServiceContextModule

/// Typed publish/subscribe between services, so that no service holds a reference to another.
///
/// `publish` never waits: each subscriber has its own unbounded buffer and receives the messages
/// of its type in publication order, however slowly it reads.
public final class MessageBus: Sendable {
    private struct Subscriber: Sendable {
        let deliver: @Sendable (any Sendable, ServiceContext?) -> Void
    }

    private struct Registry: Sendable {
        var nextID = 0
        var subscribers: [ObjectIdentifier: [Int: Subscriber]] = [:]
    }

    private let registry = Mutex(Registry())

    /// An empty bus.
    public init() {}

    /// Sends `message` to every current subscriber of its exact type. Never blocks.
    public func publish<Message: Sendable>(_ message: Message) {
        let targets = registry.withLock { registry in
            registry.subscribers[ObjectIdentifier(Message.self)].map { Array($0.values) } ?? []
        }
        guard !targets.isEmpty else { return }
        let context = ServiceContext.current
        for target in targets {
            target.deliver(message, context)
        }
    }

    /// The messages of type `Message` published from now on, in order. Ending the iteration
    /// (or dropping the stream) unsubscribes.
    public func subscribe<Message: Sendable>(to type: Message.Type = Message.self) -> AsyncStream<Message> {
        inputs { (inputs: BusInputs<Message>) in inputs.relay(type) { $0.message } }.stream
    }

    /// The messages of type `Message` published from now on, in order, each with the context it
    /// was published in: `requestID` names the host request during which it was published.
    public func deliveries<Message: Sendable>(of type: Message.Type = Message.self) -> AsyncStream<BusDelivery<Message>> {
        inputs { (inputs: BusInputs<BusDelivery<Message>>) in inputs.relay(type) { $0 } }.stream
    }

    /// One `observe` registration, for `stopObserving`.
    package struct Observation: Sendable {
        let key: ObjectIdentifier
        let id: Int
    }

    /// Calls `handler` synchronously, on the publisher's task, for every `Message` published from
    /// now on: the host learns of a session lock change before the hook that published it returns.
    package func observe<Message: Sendable>(_ type: Message.Type, _ handler: @escaping @Sendable (Message) -> Void) -> Observation {
        add(type) { message, _ in handler(message) }
    }

    /// Registers `deliver` for every `Message` published from now on.
    private func add<Message: Sendable>(_ type: Message.Type, _ deliver: @escaping @Sendable (Message, ServiceContext?) -> Void) -> Observation {
        let key = ObjectIdentifier(Message.self)
        let id = registry.withLock { registry in
            let id = registry.nextID
            registry.nextID += 1
            registry.subscribers[key, default: [:]][id] = Subscriber { message, context in
                if let message = message as? Message { deliver(message, context) }
            }
            return id
        }
        return Observation(key: key, id: id)
    }

    /// `observe`, with the publisher's context: the test kit's `deliveries(of:)`.
    package func observeDeliveries<Message: Sendable>(_ type: Message.Type, _ handler: @escaping @Sendable (BusDelivery<Message>) -> Void) -> Observation {
        add(type) { handler(BusDelivery(message: $0, context: $1)) }
    }

    /// Ends an `observe` registration.
    package func stopObserving(_ observation: Observation) {
        registry.withLock { registry in
            registry.subscribers[observation.key]?[observation.id] = nil
            if registry.subscribers[observation.key]?.isEmpty == true { registry.subscribers[observation.key] = nil }
        }
    }

    /// How many subscribers `Message` has now.
    public func subscriberCount<Message: Sendable>(for type: Message.Type) -> Int {
        registry.withLock { $0.subscribers[ObjectIdentifier(type)]?.count ?? 0 }
    }
}

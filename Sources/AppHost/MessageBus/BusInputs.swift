/// The message types one subscriber reads as its own input enum, through one stream
/// (`MessageBus.inputs(_:)`): one loop handles them in the order they were published, without a
/// task per type relaying its stream.
package final class BusInputs<Input: Sendable> {
    let bus: MessageBus
    let sink: AsyncStream<Input>.Continuation
    var observations: [MessageBus.Observation] = []

    init(bus: MessageBus, sink: AsyncStream<Input>.Continuation) {
        self.bus = bus
        self.sink = sink
    }

    /// Each `Message` published from now on, with its context, as the input `transform` makes
    /// of it (nil: none).
    package func relay<Message: Sendable>(_ type: Message.Type, _ transform: @escaping @Sendable (BusDelivery<Message>) -> Input?) {
        let sink = self.sink
        observations.append(bus.observeDeliveries(type) { delivery in
            if let input = transform(delivery) { sink.yield(input) }
        })
    }
}

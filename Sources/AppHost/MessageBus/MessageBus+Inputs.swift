extension MessageBus {
    /// Several message types as one stream of the subscriber's input, subscribed before this
    /// returns; ending or dropping the stream unsubscribes them all, as `subscribe(to:)` does.
    /// The sink takes the subscriber's other inputs (its timers) into the same loop.
    package func inputs<Input: Sendable>(
        _ subscribe: (BusInputs<Input>) -> Void
    ) -> (stream: AsyncStream<Input>, sink: AsyncStream<Input>.Continuation) {
        let (stream, sink) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        let inputs = BusInputs(bus: self, sink: sink)
        subscribe(inputs)
        let observations = inputs.observations
        sink.onTermination = { [weak self] _ in
            for observation in observations { self?.stopObserving(observation) }
        }
        return (stream, sink)
    }
}

import ServiceContextModule

/// A message as the bus delivered it (`MessageBus.deliveries(of:)`), with the context it was
/// published in.
public struct BusDelivery<Message: Sendable>: Sendable {
    /// The message.
    public let message: Message
    /// The publisher's `ServiceContext.current` when it published; nil outside any context.
    public let context: ServiceContext?

    /// The host request during which it was published, such as the `SIGUSR1` whose hook sent it.
    public var requestID: String? { context?.hostRequestID }
}

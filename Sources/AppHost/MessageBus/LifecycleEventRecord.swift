import ServiceContextModule
/// Published by the host on the bus after every event it fanned out: the audit record the
/// `logger` service writes and `analytics` counts.
public struct LifecycleEventRecord: Sendable, Hashable {
    /// The event; launch is reported once as `didFinishLaunching` after all launch steps.
    public let event: LifecycleEvent
    /// The state before the event.
    public let from: ApplicationState
    /// The state after it.
    public let to: ApplicationState
    /// How long the whole fan-out took.
    public let duration: Duration
    /// Services whose hook overran its deadline.
    public let overruns: [Overrun]
    /// Services whose hook threw, with the error text.
    public let failures: [String: String]
    /// How many services were asked.
    public let serviceCount: Int
    /// The request that caused the event (`ServiceContext.hostRequestID`), as the journal's
    /// `REQUEST_ID=` of the logger service's record.
    public internal(set) var requestID: String? = ServiceContext.current?.hostRequestID
    /// Why the machine asked for that request (`ServiceContext.hostRequestCause`: `sleep`,
    /// `resume`, …), so a service tells a sleep from a `SIGUSR1`; nil when it did not.
    public internal(set) var cause: String? = ServiceContext.current?.hostRequestCause
}

import AppHost

/// One hook call a `TestHost` saw: which service, which event. Recorded when the hook is
/// called, before the service's code runs, so the order is the order the host called them in.
public struct RecordedHookCall: Sendable, Hashable, CustomStringConvertible {
    /// The service's instance name.
    public let service: String
    /// The hook's event (`willFinishLaunching` and `didFinishLaunching` for the two launch steps).
    public let event: LifecycleEvent

    /// A call of `event` on `service`.
    public init(_ service: String, _ event: LifecycleEvent) {
        self.service = service
        self.event = event
    }

    /// `logger: didEnterBackground`.
    public var description: String { "\(service): \(event)" }
}

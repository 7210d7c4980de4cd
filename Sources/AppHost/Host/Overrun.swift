/// A hook that ran past its deadline.
public struct Overrun: Sendable, Hashable, CustomStringConvertible {
    /// The service's instance name.
    public let service: String
    /// The hook, such as `applicationDidEnterBackground`.
    public let hook: String
    /// The deadline it missed.
    public let deadline: Duration

    public var description: String { "\(service) overran \(hook) (\(deadline.configText))" }
}

/// Published by the host when it started a service's run loop (or the whole service) again
/// under its `RestartPolicy`, and when restarting gave way.
public struct ServiceDidRestart: Sendable, Hashable {
    /// The service's instance name.
    public let service: String
    /// Its restarts in this run of the host, this one included.
    public let restarts: Int
    /// What was started again.
    public let scope: RestartPolicy.Scope
    /// The error its run loop ended with; nil when it returned.
    public let error: String?

    /// A restart of `service`.
    public init(service: String, restarts: Int, scope: RestartPolicy.Scope, error: String?) {
        self.service = service
        self.restarts = restarts
        self.scope = scope
        self.error = error
    }
}

/// What the host says about itself; the daemon turns `description` into `STATUS=`.
public struct HostStatus: Sendable, Hashable, CustomStringConvertible {
    /// The lifecycle state.
    public var state: ApplicationState
    /// Each service, in registration order.
    public var services: [ServiceHealth]
    /// The most recent overrun by any service.
    public var lastOverrun: Overrun?
    /// A passing remark, such as a failed reload; cleared by the next successful reload.
    public var note: String?
    /// Why the session is locked (`entered background`, `secret unavailable: …`); nil while unlocked.
    public var sessionLockReason: String?
    /// Why the host is unhealthy: a required service stuck in one hook past its stall limit, or
    /// one that reported itself unhealthy; nil while healthy. The daemon's watchdog pings only
    /// while this is nil.
    public var healthProblem: String?
    /// What each first-of and one-of runs, by its path: `notify → journal`.
    public var choices: [String] = []

    /// `active · 4 services · analytics overran applicationDidEnterBackground (5s)`.
    public var description: String {
        let enabled = services.count { $0.isEnabled }
        var parts = [state.rawValue, enabled == 1 ? "1 service" : "\(enabled) services"]
        parts += choices
        if enabled < services.count {
            parts.append("disabled: " + services.lazy.filter { !$0.isEnabled }.map(\.name).joined(separator: ", "))
        }
        if let lastOverrun { parts.append(lastOverrun.description) }
        if let sessionLockReason {
            parts.append(sessionLockReason.isEmpty ? "session locked" : "session locked (\(sessionLockReason))")
        }
        if let note { parts.append(note) }
        if let healthProblem { parts.append("unhealthy: \(healthProblem)") }
        return parts.joined(separator: " · ")
    }
}

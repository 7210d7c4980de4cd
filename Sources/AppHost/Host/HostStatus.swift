/// What the host says about itself; the daemon turns `description` into `STATUS=`.
public struct HostStatus: Sendable, Hashable, CustomStringConvertible {
    /// The request this status follows (`ServiceContext.hostRequestID`); not part of its
    /// equality: the same status after another request is no news.
    public var requestID: String?

    /// The lifecycle state.
    public var state: ApplicationState
    /// Why the host came to `state`, when the machine asked for it (`sleep`, `resume`:
    /// `ServiceContext.hostRequestCause`); nil after a signal or a call of the program.
    public var cause: String?
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
    /// The network path as the host last heard it; `unavailable` shows as `offline`.
    public var networkPath: NetworkPath = .unknown
    /// The power state as the host last heard it; low power mode shows as `low power`.
    public var powerState: PowerState = .unknown

    public static func == (lhs: HostStatus, rhs: HostStatus) -> Bool {
        lhs.state == rhs.state && lhs.cause == rhs.cause && lhs.services == rhs.services && lhs.lastOverrun == rhs.lastOverrun && lhs.note == rhs.note
            && lhs.sessionLockReason == rhs.sessionLockReason && lhs.healthProblem == rhs.healthProblem && lhs.choices == rhs.choices
            && lhs.networkPath == rhs.networkPath && lhs.powerState == rhs.powerState
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(state)
        hasher.combine(cause)
        hasher.combine(services)
        hasher.combine(lastOverrun)
        hasher.combine(note)
        hasher.combine(sessionLockReason)
        hasher.combine(healthProblem)
        hasher.combine(choices)
        hasher.combine(networkPath)
        hasher.combine(powerState)
    }

    /// `active · 4 services · notification restarting (2/5 in 60s) · analytics overran
    /// applicationDidEnterBackground (5s)`; `background (sleep) · 4 services` when the machine
    /// asked; `· offline` and `· low power` while the machine is so.
    public var description: String {
        let enabled = services.count { $0.isEnabled }
        let state = cause.map { "\(self.state.rawValue) (\($0))" } ?? self.state.rawValue
        var parts = [state, enabled.counted("service")]
        parts += choices
        if enabled < services.count {
            parts.append("disabled: " + services.lazy.filter { !$0.isEnabled }.map(\.name).joined(separator: ", "))
        }
        for service in services {
            if let pending = service.pendingRestart { parts.append("\(service.name) restarting (\(pending))") }
        }
        if let lastOverrun { parts.append(lastOverrun.description) }
        if let sessionLockReason {
            parts.append(sessionLockReason.isEmpty ? "session locked" : "session locked (\(sessionLockReason))")
        }
        if networkPath.status == .unavailable { parts.append("offline") }
        if powerState.isLowPowerModeEnabled { parts.append("low power") }
        if let note { parts.append(note) }
        if let healthProblem { parts.append("unhealthy: \(healthProblem)") }
        return parts.joined(separator: " · ")
    }
}

extension HostStatus {
    func withRequestID(_ id: String?) -> HostStatus {
        var status = self
        status.requestID = id
        return status
    }
}

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

/// How one service is doing.
public struct ServiceHealth: Sendable, Hashable {
    /// Whether it gets events.
    public enum Condition: Sendable, Hashable {
        /// It gets events.
        case healthy
        /// It failed to launch (or a reload could not restart it) and gets no further events.
        case disabled(reason: String)
    }

    /// The instance name.
    public let name: String
    /// Whether it is required.
    public let isRequired: Bool
    /// Healthy or disabled.
    public var condition: Condition
    /// Its last overrun, if any.
    public var lastOverrun: Overrun?
    /// Its last thrown hook error, as text.
    public var lastError: String?

    /// Whether it gets events: not disabled.
    public var isEnabled: Bool { condition == .healthy }
}

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

    /// `active · 4 services · analytics overran applicationDidEnterBackground (5s)`.
    public var description: String {
        let enabled = services.filter(\.isEnabled).count
        var parts = [state.rawValue, enabled == 1 ? "1 service" : "\(enabled) services"]
        let disabled = services.filter { !$0.isEnabled }.map(\.name)
        if !disabled.isEmpty { parts.append("disabled: " + disabled.joined(separator: ", ")) }
        if let lastOverrun { parts.append(lastOverrun.description) }
        if let sessionLockReason {
            parts.append(sessionLockReason.isEmpty ? "session locked" : "session locked (\(sessionLockReason))")
        }
        if let note { parts.append(note) }
        return parts.joined(separator: " · ")
    }
}

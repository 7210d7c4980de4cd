import AppHost

/// A service's state as Host1 and `apphostd status` name it.
package enum HostDBusServiceState: String, Sendable, CaseIterable {
    /// It gets events and its run loop runs (or it has none).
    case running
    /// Its run loop ended and a restart waits.
    case restarting
    /// Its restarts gave way (`failed 6 times in 60s`).
    case failed
    /// Disabled: it failed to launch, or a reload could not restart it.
    case stopped

    package init(_ service: ServiceHealth) {
        if service.failure != nil {
            self = .failed
        } else if !service.isEnabled {
            self = .stopped
        } else if service.pendingRestart != nil {
            self = .restarting
        } else {
            self = .running
        }
    }

    /// Empty while healthy; else why not: its failure, why it is disabled, its own report, or
    /// the hook it is stuck in.
    package static func health(of service: ServiceHealth) -> String {
        if let failure = service.failure { return failure }
        if case .disabled(let reason) = service.condition { return reason }
        if let report = service.healthReport { return "reports: \(report)" }
        if let hook = service.busyHook { return "inside \(hook) past its deadline" }
        return ""
    }
}

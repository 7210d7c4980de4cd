import Logging

/// The host's health as the loop last found it: why it is unhealthy, if it is. A change is
/// logged, and kept in the launch state for the next launch to name.
struct HealthBook {
    /// Why the host is unhealthy (`HostStatus.healthProblem`); nil while healthy.
    private(set) var problem: String?

    /// Looks at `slots` at `now` (`[ServiceSlot].healthProblem(at:)`); returns when the next
    /// busy service reaches its stall limit, for the loop to wake then.
    mutating func check(_ slots: [ServiceSlot], at now: ContinuousClock.Instant, logger: Logger, launchState: (any LaunchStateStorage)?) -> ContinuousClock.Instant? {
        let (found, nextStall) = slots.healthProblem(at: now)
        guard found != problem else { return nextStall }
        if let found {
            logger.error("unhealthy: \(found)", metadata: ["health": "\(found)"])
        } else {
            logger.notice("healthy again (was: \(problem ?? ""))")
        }
        problem = found
        do {
            try launchState?.recordHealthProblem(found)
        } catch {
            logger.warning("could not keep the health problem for the next launch: \(error)")
        }
        return nextStall
    }
}

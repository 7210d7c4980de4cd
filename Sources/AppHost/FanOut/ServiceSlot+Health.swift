extension [ServiceSlot] {
    /// Why the host is unhealthy at `now`, if it is: the first required service (registration
    /// order) that is disabled, whose restarts gave way, stuck in one hook past its stall limit,
    /// or that reported itself unhealthy; and when the next busy one reaches its stall limit.
    func healthProblem(at now: ContinuousClock.Instant) -> (problem: String?, nextStall: ContinuousClock.Instant?) {
        var problem: String?
        var nextStall: ContinuousClock.Instant?
        // By index, reading fields in place: a copy of each slot per check costs at 1000 services.
        for index in indices where self[index].descriptor.isRequired {
            if case .disabled(let reason) = self[index].health.condition {
                problem = problem ?? "\(self[index].name) is disabled: \(reason)"
                continue
            }
            if let failure = self[index].health.failure { problem = problem ?? "\(self[index].name) \(failure)" }
            if self[index].isBusy, let busy = self[index].busySince {
                let limit = self[index].stallLimit
                if now - busy.instant >= limit {
                    problem = problem ?? "\(self[index].name) stuck in \(busy.hook) for more than \(limit.configText)"
                } else {
                    nextStall = Swift.min(nextStall ?? busy.instant + limit, busy.instant + limit)
                }
            }
            if let report = self[index].healthReport { problem = problem ?? "\(self[index].name) reports: \(report)" }
        }
        return (problem, nextStall)
    }
}

/// What went wrong in the hooks of one event, for its `LifecycleEventRecord`: the overruns in
/// order, and each failed service's error.
struct HookTally {
    var overruns: [Overrun] = []
    var failures: [String: String] = [:]

    /// The record of `event`'s fan-out to `serviceCount` services, begun at `start`.
    func record(of event: LifecycleEvent, from: ApplicationState, to: ApplicationState, since start: ContinuousClock.Instant, serviceCount: Int) -> LifecycleEventRecord {
        LifecycleEventRecord(
            event: event, from: from, to: to, duration: ContinuousClock.now - start,
            overruns: overruns, failures: failures, serviceCount: serviceCount
        )
    }
}

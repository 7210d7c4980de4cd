/// What went wrong in the hooks of one event, for its `LifecycleEventRecord`: the overruns in
/// order, and each failed service's error.
struct HookTally {
    var overruns: [Overrun] = []
    var failures: [String: String] = [:]
}

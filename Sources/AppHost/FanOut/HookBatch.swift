/// A list of hook calls the loop makes under their deadlines, across the runs it takes: where
/// the next run starts, and each call's result so far. A call that overruns ends its run; its
/// service is busy until it returns, and the next run starts after it.
struct HookBatch {
    let calls: [HookCall]
    /// The index of each call's service among the host's slots.
    let owners: [Int]
    /// No call follows one that did not return `true` or overran.
    let stopsAtFailure: Bool
    private(set) var results: [HookResult]
    /// Where the next run starts.
    private var start = 0

    init(calls: [HookCall], owners: [Int], stopsAtFailure: Bool) {
        self.calls = calls
        self.owners = owners
        self.stopsAtFailure = stopsAtFailure
        self.results = Array(repeating: .skipped, count: calls.count)
    }

    /// Every call was made or will not be.
    var isDone: Bool { start >= calls.count }

    /// The calls the next run makes.
    var remaining: [HookCall] { Array(calls[start...]) }

    /// `run` made all its calls.
    mutating func finished(_ run: HookRun) {
        let made = run.results
        for offset in made.indices { results[start + offset] = made[offset] }
        start = calls.count
    }

    /// `run` was handed over at its call at `overdue.position` (`HookRun.handOverIfOverdue`):
    /// that call overran, its service is busy in `slots` since the call began, and the batch
    /// goes on after it (or ends, with `stopsAtFailure`).
    mutating func handOver(_ run: HookRun, at overdue: (position: Int, startedAt: ContinuousClock.Instant), slots: inout [ServiceSlot]) {
        let made = run.results
        for offset in 0..<overdue.position { results[start + offset] = made[offset] }
        let index = start + overdue.position
        results[index] = .overran(calls[index].deadline)
        slots[owners[index]].isBusy = true
        slots[owners[index]].busySince = (overdue.startedAt, calls[index].hook.name)
        start = stopsAtFailure ? calls.count : index + 1
    }

    /// The loop stops waiting (a terminate during the launch, the host cancelled): the call in
    /// progress is `.abandoned`, its service busy until it returns; a call never begun stays
    /// free.
    mutating func abandon(_ run: HookRun, slots: inout [ServiceSlot]) {
        let abandoned = run.abandon()
        let made = run.results
        for offset in made.indices { results[start + offset] = made[offset] }
        guard let abandoned else { return }
        results[start + abandoned.position] = .abandoned
        if abandoned.started { slots[owners[start + abandoned.position]].isBusy = true }
    }
}

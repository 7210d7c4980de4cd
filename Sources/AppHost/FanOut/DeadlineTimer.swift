/// Wakes the host's loop at the instants it arms: one sleeping child task per armed instant.
///
/// The loop arms an instant only when no earlier wake is pending, so a burst of quick hooks costs
/// one timer and an idle host none.
enum DeadlineTimer {
    static func run(arms: AsyncStream<ContinuousClock.Instant>, wake: AsyncStream<HostInput>.Continuation) async {
        await withDiscardingTaskGroup { group in
            for await instant in arms {
                group.addTask {
                    do {
                        try await Task.sleep(until: instant, clock: .continuous)
                        wake.yield(.deadline(instant))
                    } catch {}
                }
            }
            group.cancelAll()
        }
    }
}

extension HostLoop {
    /// Terminates: `willTerminate` to every enabled service in reverse registration order, each
    /// under the terminate deadline, then `notRunning`. A service still inside an earlier hook
    /// gets its `willTerminate` queued behind it and is waited for within the same deadline, so
    /// nobody's last call comes out of reverse order.
    mutating func terminate(only indices: [Int]? = nil, group: inout DiscardingTaskGroup) async {
        guard case .perform(let actions) = machine.decide(.terminateNow), !actions.isEmpty else { return }
        await perform(actions, terminating: indices, group: &group)
        outlet.report(.stopped(status))
    }

    /// The `terminateServices` step: `willTerminate` to `indices` (every service when nil) in
    /// reverse order, then the clean exit recorded.
    mutating func terminateServices(only indices: [Int]?, group: inout DiscardingTaskGroup) async {
        let start = ContinuousClock.now
        var tally = HookTally()
        let targets = (indices ?? Array(services.indices)).reversed()
        if isCancelled {
            logger.warning("cancelled: the services get no applicationWillTerminate")
        }
        for index in targets {
            if services[index].health.isEnabled, !isCancelled {
                let result = await call(index, .event(.willTerminate), deadline: configuration.terminateDeadline, waitIfBusy: true, group: &group)
                record(result, of: .willTerminate, at: index, in: &tally)
            }
            retire(index)
            outlet.report(.progress(next: configuration.terminateDeadline))
        }
        bus.publish(tally.record(of: .willTerminate, from: .terminating, to: .notRunning, since: start, serviceCount: targets.count))
        // Bytes handed over in willTerminate are in the stream before each call's answer.
        restorable.keep(machine, slots: services)
        restorable.persist(always: true)
        if let launchOptions, !isCancelled { configuration.launchState?.markCleanExit(of: launchOptions, logger: logger) }
    }
}

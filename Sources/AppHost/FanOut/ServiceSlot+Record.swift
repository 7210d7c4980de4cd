import Logging

extension ServiceSlot {
    /// Logs what went wrong in one hook of the service, and books it in its health and in
    /// `tally`; returns the overrun when it overran. A hook that returned books nothing.
    mutating func record(_ result: HookResult, of event: LifecycleEvent, in tally: inout HookTally, logger: Logger) -> Overrun? {
        switch result {
        case .returned, .skipped, .abandoned:
            return nil
        case .deferred:
            logger.warning("\(name) is still in an earlier hook; \(event.hookName) queued behind it", metadata: ["service": "\(name)", "event": "\(event.name)"])
            return nil
        case .threw(let error):
            tally.failures[name] = error
            health.lastError = error
            logger.error("\(name) threw in \(event.hookName): \(error)", metadata: ["service": "\(name)", "event": "\(event.name)"])
            return nil
        case .overran(let deadline):
            let overrun = Overrun(service: name, hook: event.hookName, deadline: deadline)
            tally.overruns.append(overrun)
            health.lastOverrun = overrun
            context.metrics.countOverrun()
            logger.warning("\(overrun)", metadata: ["service": "\(name)", "event": "\(event.name)", "deadline": "\(deadline.configText)"])
            return overrun
        }
    }
}

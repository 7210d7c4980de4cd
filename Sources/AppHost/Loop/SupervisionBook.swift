import Logging

/// The supervision book: what each service's `RestartSupervisor` decided when its run loop
/// ended on its own, and when the earliest step (a restart's delay, a stop at once) is due. The
/// loop books an end where it arrives, asks the book which step is due on each turn, and arms
/// the wake the book names; when a step may run is the machine's (`LifecycleRequest.supervise`).
struct SupervisionBook {
    /// When the earliest step may be due; nil while none waits, so the loop's every turn looks
    /// at no slot for it.
    private(set) var due: ContinuousClock.Instant?

    /// Logs the end of `slot`'s run loop and books it with its supervisor, unless the machine
    /// refused its restart (`refusal`); returns when to wake the loop for the restart its
    /// supervisor decided, if one.
    mutating func book(_ ending: RunLoopEnding, of slot: inout ServiceSlot, refusedBecause refusal: String?, at now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let name = slot.name
        let metadata: Logger.Metadata = ["service": "\(name)"]
        switch ending {
        case .returned:
            // Most services' run loop is the default, which returns at once: news only where
            // the policy restarts it.
            slot.logger.log(level: slot.descriptor.restart.mode == .temporary ? .debug : .notice, "run loop returned", metadata: metadata)
        case .threw(let error):
            slot.health.lastError = error
            slot.logger.error("run loop ended with an error: \(error)", metadata: metadata)
        }
        if let refusal {
            slot.logger.debug("\(name) not restarted: \(refusal)", metadata: metadata)
            return nil
        }
        switch slot.supervisor?.runEnded(ending, at: now, jitter: .random(in: 0...1)) {
        case .restart(let at, let delay, _)?:
            let pending = slot.supervisor?.pending
            slot.health.pendingRestart = pending
            var metadata: Logger.Metadata = ["service": "\(name)", "restart": "\(pending?.count ?? 0)"]
            if case .threw(let error) = ending { metadata["error"] = "\(error)" }
            slot.logger.notice("\(name) restarting in \(delay.configText) (\(pending.map { "\($0)" } ?? ""))", metadata: metadata)
            due = min(due ?? at, at)
            return at
        case .escalate(let reason, let stops)?:
            slot.health.failure = reason
            if stops {
                due = now
                slot.logger.error("\(name) \(reason): not restarted again; an optional service, so it is stopped", metadata: metadata)
            } else {
                slot.logger.critical("\(name) \(reason): not restarted again; a required service, so the host is unhealthy", metadata: metadata)
            }
            return nil
        case .leave?, nil:
            return nil
        }
    }

    /// The first of `slots` whose supervisor has a step due at `now`, and that step. Looks at
    /// the slots only once `due` passed; finding none, sets `due` to the next step's time and
    /// returns it as `wake` (the wake for it may have been skipped while an earlier one was
    /// pending).
    mutating func dueStep(in slots: [ServiceSlot], at now: ContinuousClock.Instant) -> (step: (index: Int, step: RestartSupervisor.Step)?, wake: ContinuousClock.Instant?) {
        guard let due, due <= now else { return (nil, nil) }
        var next: ContinuousClock.Instant?
        for index in slots.indices {
            if let step = slots[index].supervisor?.dueStep(at: now) { return ((index, step), nil) }
            if let at = slots[index].supervisor?.dueAt { next = min(next ?? at, at) }
        }
        self.due = next
        return (nil, next)
    }

    /// When to wake the loop for the next waiting restart (a wake armed for an earlier instant
    /// does not arm the later ones); one already due needs none: the loop's next turn takes it.
    func wake(after now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let due, due > now else { return nil }
        return due
    }

    /// The restart's log line, counter and bus message, once `slot`'s run loop started again.
    static func announceRestart(of slot: inout ServiceSlot, scope: RestartPolicy.Scope, after ending: RunLoopEnding?, on bus: MessageBus) {
        let restarts = slot.supervisor?.total ?? 0
        // A run loop that ended again already has its next restart waiting.
        if slot.runLoopStop != nil { slot.health.pendingRestart = nil }
        slot.context.metrics.countRestart()
        slot.logger.notice("\(slot.name) restarted (\(restarts) in this run)", metadata: ["service": "\(slot.name)", "restart": "\(restarts)"])
        var error: String?
        if case .threw(let text)? = ending ?? slot.supervisor?.lastEnding { error = text }
        bus.publish(ServiceDidRestart(service: slot.name, restarts: restarts, scope: scope, error: error))
    }
}

import Logging
import ServiceContextModule

/// Carrying out a request: the machine's decision, its steps performed, and the request's end.
extension HostLoop {
    /// Carries out one queued request: the machine's decision, its steps, the request's end,
    /// then the answer.
    mutating func handle(_ request: HostRequest, group: inout DiscardingTaskGroup) async {
        switch request {
        case .lifecycle(let lifecycle, let reply):
            switch machine.decide(lifecycle) {
            case .perform(let actions):
                await perform(actions, group: &group)
                await finishRequest(group: &group)
                let moved = actions.contains { if case .move = $0 { true } else { false } }
                reply.resume(returning: .success(moved ? machine.state : nil))
            case .refuse(let refusal):
                logger.notice("\(request.name) ignored: \(refusal.illegalTransition)", metadata: ["reason": "\(refusal.reason)"])
                reply.resume(returning: .failure(refusal.illegalTransition))
            }
        case .memoryWarning(let level, let replies):
            switch machine.decide(.memoryWarning(level)) {
            case .perform(let actions):
                outlet.metrics.countMemoryWarning(level)
                await perform(actions, group: &group)
                await finishRequest(group: &group)
                for reply in replies { reply.resume(returning: .success(())) }
            case .refuse(let refusal):
                for reply in replies { reply.resume(returning: .failure(refusal.illegalTransition)) }
            }
        case .significantTimeChange(let replies):
            switch machine.decide(.significantTimeChange) {
            case .perform(let actions):
                await perform(actions, group: &group)
                await finishRequest(group: &group)
                for reply in replies { reply.resume(returning: .success(())) }
            case .refuse(let refusal):
                for reply in replies { reply.resume(returning: .failure(refusal.illegalTransition)) }
            }
        case .networkPath(let path, let replies):
            await applyCondition(NetworkPathKey.self, path, event: .networkDidChange, group: &group)
            for reply in replies { reply.resume(returning: .success(())) }
        case .powerState(let state, let replies):
            await applyCondition(PowerStateKey.self, state, event: .powerStateDidChange, group: &group)
            for reply in replies { reply.resume(returning: .success(())) }
        case .sessionLock(let locked, let reason, let reply):
            switch await applySessionLock(SessionLockDidChange(isLocked: locked, reason: reason ?? ""), group: &group) {
            case .success(let changed):
                await finishRequest(group: &group)
                reply.resume(returning: .success(changed))
            case .failure(let refusal):
                reply.resume(returning: .failure(refusal.illegalTransition))
            }
        case .reload(let load, let reply):
            let result = await reload(load, group: &group)
            outlet.metrics.countReload(applied: (try? result.get()) != nil)
            await finishRequest(ready: true, group: &group)
            reply.resume(returning: result)
        case .restartService(let name, let reply):
            let result = await restartOnRequest(name, group: &group)
            await finishRequest(group: &group)
            reply.resume(returning: result)
        case .note(let text, let reply):
            note = text
            await finishRequest(group: &group)
            reply.resume(returning: .success(()))
        case .barrier(let body, let reply):
            body()
            reply.resume(returning: .success(()))
        case .launched, .terminated, .terminate:
            accept(request, context: .forRequest(ServiceContext.current))
        }
    }

    /// Ends a request: session lock changes published during it are applied, the restorable
    /// state is kept if it changed, then one status (with `READY=1` after a launch or reload)
    /// describes the state after it; a step that asked for it (background, memory warning) also
    /// has the restorable state written to disk, after the status. With a terminate pending,
    /// only the terminate reports.
    mutating func finishRequest(ready: Bool = false, group: inout DiscardingTaskGroup) async {
        while !sessionLockChanges.isEmpty {
            let change = sessionLockChanges.removeFirst()
            // Refused once a terminate is pending: the terminate runs next. A change the machine
            // asked for (the screen lock) keeps its own cause inside another request.
            if let cause = change.cause, cause != ServiceContext.current?.hostRequestCause {
                var context = ServiceContext.current ?? .forRequest(nil)
                context.hostRequestCause = cause
                _ = await ServiceContext.withValue(context) { await applySessionLock(change, group: &group) }
            } else {
                await applySessionLock(change, group: &group)
            }
        }
        let persist = restorable.isPersistDue, durably = restorable.isDurablePersistDue
        restorable.isPersistDue = false
        restorable.isDurablePersistDue = false
        guard !machine.isTerminatePending else {
            // The terminate persists the last state itself; a request that answers only once
            // the state is on disk (a sleep a terminate overtook) still waits for it.
            if durably {
                restorable.keep(machine, slots: services)
                await restorable.persistDurably()
            }
            return
        }
        restorable.keep(machine, slots: services)
        if isHealthCheckDue {
            checkHealth()
            if let wake = supervision.wake(after: .now) { armTimer(at: wake) }
        }
        if serviceHealth == nil, !services.isEmpty { serviceHealth = services.map(\.statusHealth) }
        outlet.finishRequest(with: status, ready: ready)
        // After the status, off its path; a durable persist holds the request's answer until
        // the state is on disk.
        if durably {
            await restorable.persistDurably()
        } else {
            restorable.persist(always: persist)
        }
    }

    /// What a step that answers with a result (the launch, the reload) produced.
    enum StepOutcome {
        case launched(Result<LaunchOptions, LaunchFailure>)
        case reloaded(Result<ConfigurationDidReload, InvalidConfiguration>)
    }

    /// Performs the machine's steps in order; returns what the launch or reload step produced.
    /// `terminating` limits `terminateServices` to those services (a rolled-back launch);
    /// `loading` is the reload's new configuration.
    @discardableResult
    mutating func perform(
        _ actions: [LifecycleAction], terminating indices: [Int]? = nil,
        loading load: (@Sendable () throws -> [ServiceDescriptor])? = nil, group: inout DiscardingTaskGroup
    ) async -> StepOutcome? {
        var outcome: StepOutcome?
        for action in actions {
            switch action {
            case .deliver(let event, let from, let to): await fanOut(event, from: from, to: to, group: &group)
            case .terminateServices: await terminateServices(only: indices, group: &group)
            case .launchServices: outcome = .launched(await launchServices(group: &group))
            case .reloadConfiguration:
                outcome = .reloaded(await applyReload(load ?? { throw ConfigurationError(keyPath: "", message: "the reload named no configuration") }, group: &group))
            default: apply(action)
            }
        }
        return outcome
    }

    /// Asks the machine about a request of the host's own (a launch step, terminate) and
    /// performs its steps; the refusal when it has none.
    @discardableResult
    mutating func carryOut(_ request: LifecycleRequest, terminating indices: [Int]? = nil, group: inout DiscardingTaskGroup) async -> Result<StepOutcome?, LifecycleRefusal> {
        switch machine.decide(request) {
        case .perform(let actions): .success(await perform(actions, terminating: indices, group: &group))
        case .refuse(let refusal): .failure(refusal)
        }
    }

    /// The steps that wait for nothing.
    mutating func apply(_ action: LifecycleAction) {
        switch action {
        case .move(let target): move(to: target)
        case .trimHeap(let level): configuration.trimHeap?(level)
        case .setProtectedDataAvailable(let available): machine.setProtectedDataAvailable(available)
        case .setSessionLockReason(let reason): machine.setSessionLockReason(reason)
        case .setSleep(let sleep): machine.setSleep(sleep)
        case .persistRestorableState: restorable.isPersistDue = true
        case .persistRestorableStateDurably: restorable.isDurablePersistDue = true
        case .setTerminatePending:
            machine.setTerminatePending()
            logger.notice("terminating: \(terminateReason)")
            outlet.report(.stopping(reason: terminateReason))
        case .dropQueuedRequests:
            for dropped in queue.removeAll() { drop(dropped) }
        case .deliver, .terminateServices, .launchServices, .reloadConfiguration, .restartRunLoop, .restartInstance, .forgetFailures, .stopService:
            logger.critical("lifecycle bug: \(action) needs the loop to wait; it went to apply(_:)")
        }
    }

    /// Locks or unlocks the session and fans out the protected-data event; false when the
    /// session already was that way (a new reason for a lock is still taken).
    @discardableResult
    mutating func applySessionLock(_ change: SessionLockDidChange, group: inout DiscardingTaskGroup) async -> Result<Bool, LifecycleRefusal> {
        switch machine.decide(.sessionLock(change.isLocked, reason: change.reason)) {
        case .refuse(let refusal):
            return .failure(refusal)
        case .perform(let actions):
            guard !actions.isEmpty else { return .success(false) }
            await perform(actions, group: &group)
            outlet.publish(status: status)
            return .success(actions.contains { if case .setProtectedDataAvailable = $0 { true } else { false } })
        }
    }
}

extension HostLoop {
    /// A condition's new value: kept (the same value again is no change), then told to every
    /// service when the host runs; before the launch or after the end it is only kept.
    mutating func applyCondition<Key: SharedStateKey>(
        _ key: Key.Type, _ value: Key.Value, event: LifecycleEvent, group: inout DiscardingTaskGroup
    ) async where Key.Value: Equatable {
        guard sharedState[key] != value else { return }
        sharedState.set(key, to: value)
        guard case .perform(let actions) = machine.decide(.conditionChange(event)) else { return }
        await perform(actions, group: &group)
        await finishRequest(group: &group)
    }
}

extension LifecycleStateMachine {
    /// The steps that carry out `request` from where the machine stands, in order, or why it is
    /// refused. "Will" events are delivered before the move they announce, "did" events after it.
    package func decide(_ request: LifecycleRequest) -> LifecycleDecision {
        switch request {
        case .terminate:
            return .perform(isTerminatePending ? [] : [.setTerminatePending, .dropQueuedRequests])
        case .terminateNow:
            return decideTerminateNow()
        case .launch, .continueLaunch, .finishLaunch, .abortLaunch, .restoreSessionLock:
            // The launch carries its own steps through; a terminate that arrived cuts it short
            // between services (`continueLaunch`), and rolls it back with `terminateNow`.
            return decideLaunchStep(request)
        case .enterBackground, .enterForeground, .toggleBackground, .memoryWarning, .significantTimeChange, .conditionChange, .sessionLock, .reload:
            if isTerminatePending { return refuse(request, "a terminate is pending, and it comes first") }
            if let sleep, state == .background, let steps = decideWhileAsleep(request, sleep) { return .perform(steps) }
            return decideWhileRunning(request)
        case .prepareForSleep, .resume:
            // A sleep after a terminate: the terminate saves the state, and the host is gone
            // before the machine sleeps.
            if isTerminatePending { return refuse(request, "a terminate is pending, and it comes first") }
            return decideSleep(request)
        case .supervise, .restartService:
            return decideSupervision(request)
        }
    }

    /// The machine's sleep: the preparation moves the host to the background and keeps where
    /// to return; the resume returns there once every preparation is over.
    private func decideSleep(_ request: LifecycleRequest) -> LifecycleDecision {
        switch (request, sleep, state) {
        case (.prepareForSleep(let kind), let sleep?, _):
            // A shutdown while a sleep is prepared (or the reverse): the first's return state
            // stays, and the state goes to disk again.
            return .perform([.setSleep(MachineSleep(returningTo: sleep.stateAfter, kinds: sleep.kinds.union([kind]))), .persistRestorableStateDurably])
        case (.prepareForSleep(let kind), nil, .active):
            return .perform(Self.toBackground + [.setSleep(MachineSleep(returningTo: .active, kinds: [kind])), .persistRestorableStateDurably])
        case (.prepareForSleep(let kind), nil, .background):
            return .perform([.setSleep(MachineSleep(returningTo: .background, kinds: [kind])), .persistRestorableStateDurably])
        case (.prepareForSleep, nil, _):
            return refuse(request, "only a launched host prepares for the machine's sleep; it is \(state)")
        case (.resume, nil, _):
            // Nothing was prepared (a resume without its preparation): nothing to return from.
            return .perform([])
        case (.resume(let kind), var sleep?, _):
            if let kind { sleep.kinds.remove(kind) } else { sleep.kinds = [] }
            guard sleep.kinds.isEmpty else { return .perform([.setSleep(sleep)]) }
            return .perform([.setSleep(nil)] + (sleep.stateAfter == .active && state == .background ? Self.toForeground : []))
        default:
            return refuse(request, "not a request of the machine's sleep")
        }
    }

    /// A move between foreground and background while the machine sleeps: the host stays in
    /// the background, and the move changes where it returns at the resume. Nil for the other
    /// requests, which go as ever.
    private func decideWhileAsleep(_ request: LifecycleRequest, _ sleep: MachineSleep) -> [LifecycleAction]? {
        let target: ApplicationState
        switch request {
        case .enterBackground: target = .background
        case .enterForeground: target = .active
        case .toggleBackground: target = sleep.stateAfter == .active ? .background : .active
        default: return nil
        }
        return target == sleep.stateAfter ? [] : [.setSleep(MachineSleep(returningTo: target, kinds: sleep.kinds))]
    }

    private func decideTerminateNow() -> LifecycleDecision {
        switch state {
        case .launching, .active, .inactive, .background:
            .perform([.move(to: .terminating), .terminateServices, .move(to: .notRunning)])
        case .terminating, .notRunning:
            .perform([])
        }
    }

    private func decideLaunchStep(_ request: LifecycleRequest) -> LifecycleDecision {
        switch (request, state) {
        case (.launch, .notRunning):
            .perform([.move(to: .launching), .launchServices])
        case (.launch, _):
            refuse(request, "the host launches once; it is \(state)")
        case (.finishLaunch(let intoBackground), .launching):
            // Restoring a run that ended in the background launches into the background, as
            // iOS launches an app there.
            .perform(intoBackground
                ? [.move(to: .background), .deliver(.didEnterBackground, from: .launching, to: .background)]
                : [.move(to: .active), .deliver(.didBecomeActive, from: .launching, to: .active)])
        case (.continueLaunch, .launching), (.continueLaunch, .active), (.continueLaunch, .inactive), (.continueLaunch, .background):
            isTerminatePending ? refuse(request, "a terminate is pending: the launch stops before the next service") : .perform([])
        case (.abortLaunch, .launching):
            .perform([.move(to: .terminating), .move(to: .notRunning)])
        case (.restoreSessionLock(let reason), .launching):
            .perform([.setSessionLockReason(reason), .setProtectedDataAvailable(false)])
        default:
            refuse(request, "only a launching host finishes, aborts or restores its launch, and only a launched one launches more services")
        }
    }

    private func decideWhileRunning(_ request: LifecycleRequest) -> LifecycleDecision {
        switch (request, state) {
        case (.enterBackground, .background):
            // Asked again: what services kept since goes to disk.
            return .perform([.persistRestorableState])
        case (.enterForeground, .active):
            return .perform([])
        case (.enterBackground, .active), (.toggleBackground, .active):
            return .perform(Self.toBackground + [.persistRestorableState])
        case (.enterForeground, .background), (.toggleBackground, .background):
            return .perform(Self.toForeground)
        case (.enterBackground, _), (.enterForeground, _), (.toggleBackground, _):
            return refuse(request, "only an active host goes to the background and only a background host comes to the foreground")

        case (.memoryWarning(let level), .active), (.memoryWarning(let level), .inactive), (.memoryWarning(let level), .background):
            return .perform([.deliver(.didReceiveMemoryWarning(level), from: state, to: state), .trimHeap(level), .persistRestorableState])
        case (.memoryWarning, _):
            return refuse(request, "memory warnings reach launched services only")

        case (.significantTimeChange, .active), (.significantTimeChange, .inactive), (.significantTimeChange, .background):
            return .perform([.deliver(.significantTimeChange, from: state, to: state)])
        case (.significantTimeChange, _):
            return refuse(request, "time changes reach launched services only")

        case (.conditionChange(let event), .active), (.conditionChange(let event), .inactive), (.conditionChange(let event), .background):
            return .perform([.deliver(event, from: state, to: state)])
        case (.conditionChange, _):
            return refuse(request, "the machine's conditions reach launched services only (a service launched later reads them)")

        case (.sessionLock(let locked, let reason), .active), (.sessionLock(let locked, let reason), .inactive), (.sessionLock(let locked, let reason), .background):
            if locked != isProtectedDataAvailable {
                // Already so: a lock with a new reason only says the new reason.
                return .perform(locked && !reason.isEmpty && reason != sessionLockReason ? [.setSessionLockReason(reason)] : [])
            }
            return .perform(locked
                ? [.setSessionLockReason(reason), .deliver(.protectedDataWillBecomeUnavailable, from: state, to: state), .setProtectedDataAvailable(false)]
                : [.setSessionLockReason(nil), .setProtectedDataAvailable(true), .deliver(.protectedDataDidBecomeAvailable, from: state, to: state)])
        case (.sessionLock, _):
            return refuse(request, "the session locks and unlocks while the services are launched only")

        case (.reload, .active), (.reload, .background):
            return .perform([.reloadConfiguration])
        case (.reload, _):
            return refuse(request, "cannot reload while \(state)")

        default:
            return refuse(request, "not a request of a running host")
        }
    }

    /// `active → inactive → background`, with its events.
    static let toBackground: [LifecycleAction] = [
        .deliver(.willResignActive, from: .active, to: .inactive),
        .move(to: .inactive),
        .move(to: .background),
        .deliver(.didEnterBackground, from: .inactive, to: .background),
    ]

    /// `background → inactive → active`, with its events.
    static let toForeground: [LifecycleAction] = [
        .deliver(.willEnterForeground, from: .background, to: .inactive),
        .move(to: .inactive),
        .move(to: .active),
        .deliver(.didBecomeActive, from: .inactive, to: .active),
    ]

    /// What a service that joins a running host (added by a reload) missed, in order, to see
    /// the host as its other services do.
    package var eventsToCatchUp: [LifecycleEvent] {
        var events: [LifecycleEvent] = switch state {
        case .active: [.didBecomeActive]
        case .background: [.didEnterBackground]
        case .notRunning, .launching, .inactive, .terminating: []
        }
        if !isProtectedDataAvailable { events.append(.protectedDataWillBecomeUnavailable) }
        return events
    }

    /// Why `request` is not carried out now: the decision's refusal, or, for one the machine
    /// would carry out (asked after the host's run ended), that the host no longer runs it.
    package func refusal(of request: LifecycleRequest) -> LifecycleRefusal {
        if case .refuse(let refusal) = decide(request) { return refusal }
        return LifecycleRefusal(request: request, state: state, isTerminatePending: isTerminatePending, reason: "the host's run is over")
    }

    func refuse(_ request: LifecycleRequest, _ reason: String) -> LifecycleDecision {
        .refuse(LifecycleRefusal(request: request, state: state, isTerminatePending: isTerminatePending, reason: reason))
    }
}

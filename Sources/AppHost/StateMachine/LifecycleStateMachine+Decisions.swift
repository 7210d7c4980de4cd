extension LifecycleStateMachine {
    /// The steps that carry out `request` from where the machine stands, in order, or why it is
    /// refused. "Will" events are delivered before the move they announce, "did" events after it.
    package func decide(_ request: LifecycleRequest) -> LifecycleDecision {
        switch (request, state) {
        case (.launch, .notRunning):
            return .perform([.move(to: .launching), .launchServices])
        case (.launch, _):
            return refuse(request, "the host launches once; it is \(state)")

        case (.enterBackground, .background), (.enterForeground, .active):
            return .perform([])
        case (.enterBackground, .active), (.toggleBackground, .active):
            return .perform([
                .deliver(.willResignActive, from: .active, to: .inactive),
                .move(to: .inactive),
                .move(to: .background),
                .deliver(.didEnterBackground, from: .inactive, to: .background),
            ])
        case (.enterForeground, .background), (.toggleBackground, .background):
            return .perform([
                .deliver(.willEnterForeground, from: .background, to: .inactive),
                .move(to: .inactive),
                .move(to: .active),
                .deliver(.didBecomeActive, from: .inactive, to: .active),
            ])
        case (.enterBackground, _), (.enterForeground, _), (.toggleBackground, _):
            return refuse(request, "only an active host goes to the background and only a background host comes to the foreground")

        case (.memoryWarning(let level), .active), (.memoryWarning(let level), .inactive), (.memoryWarning(let level), .background):
            return .perform([.deliver(.didReceiveMemoryWarning(level), from: state, to: state), .trimHeap(level)])
        case (.memoryWarning, _):
            return refuse(request, "memory warnings reach launched services only")

        case (.sessionLock(let locked), .active), (.sessionLock(let locked), .inactive), (.sessionLock(let locked), .background):
            if locked != isProtectedDataAvailable { return .perform([]) }
            return .perform(locked
                ? [.deliver(.protectedDataWillBecomeUnavailable, from: state, to: state), .setProtectedDataAvailable(false)]
                : [.setProtectedDataAvailable(true), .deliver(.protectedDataDidBecomeAvailable, from: state, to: state)])
        case (.sessionLock, _):
            return refuse(request, "the session locks and unlocks while the services are launched only")

        case (.reload, .active), (.reload, .background):
            return .perform([.reloadConfiguration])
        case (.reload, _):
            return refuse(request, "cannot reload while \(state)")

        case (.terminate, .launching), (.terminate, .active), (.terminate, .inactive), (.terminate, .background):
            return .perform([.move(to: .terminating), .terminateServices, .move(to: .notRunning)])
        case (.terminate, .terminating), (.terminate, .notRunning):
            return .perform([])
        }
    }

    /// The steps that end a successful launch: active, then `didBecomeActive`; or, restoring a
    /// run that ended in the background, background, then `didEnterBackground`, as iOS launches
    /// an app into the background.
    package func launchCompletionActions(intoBackground: Bool = false) -> [LifecycleAction] {
        intoBackground
            ? [.move(to: .background), .deliver(.didEnterBackground, from: .launching, to: .background)]
            : [.move(to: .active), .deliver(.didBecomeActive, from: .launching, to: .active)]
    }

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

    private func refuse(_ request: LifecycleRequest, _ reason: String) -> LifecycleDecision {
        .refuse(LifecycleRefusal(request: request, state: state, reason: reason))
    }
}

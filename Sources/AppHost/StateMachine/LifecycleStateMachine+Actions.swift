extension LifecycleStateMachine {
    /// The steps that carry out `request` from the current state, in order: "will" events are
    /// delivered before the move they announce, "did" events after it. Empty when the machine is
    /// already where the request leads (a no-op, never a duplicated event).
    /// - Throws: `IllegalTransition` when the request makes no sense in the current state.
    package func actions(for request: LifecycleRequest) throws(IllegalTransition) -> [LifecycleAction] {
        switch (request, state) {
        case (.enterBackground, .background), (.enterForeground, .active):
            return []
        case (.enterBackground, .active), (.toggleBackground, .active):
            return [
                .deliver(.willResignActive, from: .active, to: .inactive),
                .move(to: .inactive),
                .move(to: .background),
                .deliver(.didEnterBackground, from: .inactive, to: .background),
            ]
        case (.enterForeground, .background), (.toggleBackground, .background):
            return [
                .deliver(.willEnterForeground, from: .background, to: .inactive),
                .move(to: .inactive),
                .move(to: .active),
                .deliver(.didBecomeActive, from: .inactive, to: .active),
            ]
        case (.enterBackground, _):
            throw IllegalTransition(from: state, to: .background)
        case (.enterForeground, _), (.toggleBackground, _):
            throw IllegalTransition(from: state, to: .active)
        }
    }

    /// The steps that end a successful launch: active, then `didBecomeActive`.
    package var launchCompletionActions: [LifecycleAction] {
        [.move(to: .active), .deliver(.didBecomeActive, from: .launching, to: .active)]
    }
}

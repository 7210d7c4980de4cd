/// Supervision's steps as requests of the machine, and the order the loop takes its work in.
extension LifecycleStateMachine {
    /// What the loop does on its next turn between requests.
    package enum Turn: Sendable, Hashable {
        /// The run is over (the terminate was carried out): answer what is left and return.
        case close
        /// Carry out the pending terminate (or a cancelled host's).
        case terminate
        /// Carry out the supervision step that is due.
        case supervise
        /// Carry out the oldest queued request.
        case carryOutQueued
        /// Wait for the next input.
        case wait
    }

    /// The machine's precedence: a terminate (pending, or the host's task cancelled) before a
    /// supervision step that is due, which waited for the request in progress and goes before
    /// the next queued one; then the queue, oldest first.
    package func nextTurn(isCancelled: Bool, isSupervisionDue: Bool, hasQueuedRequest: Bool) -> Turn {
        guard state.isRunning else { return .close }
        if isTerminatePending || isCancelled { return .terminate }
        if isSupervisionDue { return .supervise }
        return hasQueuedRequest ? .carryOutQueued : .wait
    }

    /// A restart policy's step or an operator's restart: refused once a terminate is pending
    /// (nothing restarts then), for a service the host does not run, and before the launch or
    /// after the terminate. During the launch a run loop's end is booked and its step waits
    /// for the loop's turns after it (`nextTurn`); while the machine sleeps the steps go on,
    /// into the background.
    func decideSupervision(_ request: LifecycleRequest) -> LifecycleDecision {
        if isTerminatePending { return refuse(request, "a terminate is pending, and nothing restarts once it is") }
        if case .restartService(_, isKnown: false) = request { return refuse(request, "the host runs no service of that name") }
        guard state.isRunning else {
            return refuse(request, "only a running host restarts or stops its services; it is \(state)")
        }
        switch request {
        case .supervise(.restart(.runLoop)): return .perform([.restartRunLoop])
        case .supervise(.restart(.instance)): return .perform([.restartInstance])
        case .supervise(.stop(let reason)): return .perform([.stopService(reason: reason)])
        case .restartService: return .perform([.forgetFailures, .restartInstance])
        default: return refuse(request, "not a request of supervision")
        }
    }
}

import AppHost

// The run loop: lock requests applied in order, the grace timer, and the screen rule beside the
// background rule.
extension SessionLockService {
    /// Applies lock requests in order, runs the grace timer, and follows the screen lock of the
    /// logind session the daemon watches.
    public func run(_ application: ApplicationHandle) async throws {
        if let problem = state.withLock({ $0.isLocked ? $0.problem : nil }) {
            application.bus.publish(SessionLockDidChange(isLocked: true, reason: "secret unavailable: \(problem)"))
            publishStatus(application, pending: false)
        }
        let requestSink = self.requestSink
        let gracePeriod = self.gracePeriod
        // Subscribed in run, so that a run loop started again has subscriptions of its own; the
        // bus yields them straight into the requests, without a task relaying each.
        let bus = application.bus
        let observations = [
            bus.observe(ScreenLockDidChange.self) { requestSink.yield(.screen(locked: $0.isLocked)) },
            bus.observe(MachineDidResume.self) { _ in requestSink.yield(.resumed) },
        ]
        defer { observations.forEach(bus.stopObserving) }
        await withDiscardingTaskGroup { timers in
            var generation = 0
            // The pending grace timer's stop: finishing it ends the timer before it fires.
            var pendingLock: AsyncStream<Never>.Continuation?
            // When the pending lock is due, on a clock that counts the time asleep: a sleep
            // longer than the grace period locks the session before the foreground that follows.
            var lockDue: ContinuousClock.Instant?
            defer { pendingLock?.finish() }
            let afterGrace = "entered background \(gracePeriod.configText) ago"
            // Ends the pending lock; whether its grace period has run out (also while the
            // machine slept).
            func endPendingLock() -> Bool {
                pendingLock?.finish()
                pendingLock = nil
                defer { lockDue = nil }
                state.withLock { $0.isLockPending = false }
                return lockDue.map { ContinuousClock.now >= $0 } ?? false
            }
            for await request in requests {
                switch request {
                case .background:
                    generation += 1
                    state.withLock { $0.isInBackground = true }
                    if gracePeriod <= .zero {
                        lock(application, reason: "entered background")
                    } else {
                        // Scheduled even while the screen holds the session locked: the
                        // background rule keeps its own time, for a screen unlock within it.
                        let scheduled = generation
                        state.withLock { $0.isLockPending = true }
                        pendingLock?.finish()
                        let (stop, stopper) = AsyncStream<Never>.makeStream()
                        pendingLock = stopper
                        lockDue = .now + gracePeriod
                        timers.addTask {
                            await Self.graceTimer(gracePeriod, until: stop) { requestSink.yield(.graceElapsed(generation: scheduled)) }
                        }
                        application.logger.debug("session locks in \(gracePeriod.configText) unless the application returns")
                        publishStatus(application, pending: true)
                    }
                case .graceElapsed(let scheduled):
                    guard scheduled == generation, pendingLock != nil else { continue }
                    _ = endPendingLock()
                    lock(application, reason: afterGrace)
                case .foreground:
                    generation += 1
                    if pendingLock != nil {
                        if endPendingLock() {
                            // The grace period ran out while the machine slept.
                            lock(application, reason: afterGrace)
                        } else {
                            application.logger.debug("returned within the grace period; lock cancelled")
                            publishStatus(application, pending: false)
                        }
                    }
                    lockDue = nil
                    state.withLock { $0.isInBackground = false }
                    // With the screen locked the session stays so until the screen unlocks.
                    unlock(application, reason: "entered foreground")
                case .hostUnlocked:
                    reloadAfterExternalUnlock(application)
                case .screen(let locked):
                    screenChanged(locked: locked, application)
                case .resumed:
                    // The grace period ran out while the machine slept, and the application
                    // stays in the background: the lock its timer would have made.
                    guard pendingLock != nil, let due = lockDue, ContinuousClock.now >= due else { continue }
                    _ = endPendingLock()
                    lock(application, reason: afterGrace)
                }
            }
        }
    }

    /// The screen rule: a locked screen locks the session; an unlocked one unlocks it unless the
    /// background rule still says locked (its lock done, not merely pending).
    private func screenChanged(locked: Bool, _ application: ApplicationHandle) {
        state.withLock { $0.isScreenLocked = locked }
        if locked {
            lock(application, reason: "screen locked", cause: "screen-lock")
        } else if !unlock(application, reason: "screen unlocked", cause: "screen-lock"), state.withLock({ $0.isInBackground }) {
            application.logger.info("screen unlocked; the session stays locked: the application is in the background")
        }
    }

    /// Sleeps `period` and then calls `elapsed`, unless `stop` ends first: then the sleep is
    /// cancelled at once, so a return to the foreground leaves no timer behind.
    static func graceTimer(_ period: Duration, until stop: AsyncStream<Never>, elapsed: @Sendable () -> Void) async {
        await withTaskGroup(of: Bool.self) { race in
            race.addTask { (try? await Task.sleep(for: period)) != nil }
            race.addTask {
                for await _ in stop {}
                return false
            }
            if await race.next() == true { elapsed() }
            race.cancelAll()
        }
    }
}

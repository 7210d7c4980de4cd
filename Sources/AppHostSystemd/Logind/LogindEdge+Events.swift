import AppHost
import Logging

extension LogindEdge {
    /// What the events so far left to remember: what was said once, and the sleep under way.
    struct FollowState {
        var saidMissing = false
        var saidFollowing = false
        var saidNoSession = false
        var wasLost = false
        /// The followed screen's lock as last published; nil before the first answer.
        var screenLocked: Bool?
        var refused: Set<LogindClient.Inhibition> = []
        var saidAccessDenied = false
        /// When logind said the machine was about to sleep: the time asleep is counted from there.
        var sleptAt: ContinuousClock.Instant?
    }

    /// What an event asks of the host, which `follow` awaits.
    enum FollowStep {
        /// The machine is about to sleep or shut down: the host saves, then the inhibitor taken
        /// for preparation `number` is released.
        case prepare(LogindClient.Inhibition, number: Int)
        /// The machine is back (`saying` false: the bus went away, and logind's word will not come).
        case resume(after: LogindClient.Inhibition, saying: Bool)
    }

    /// One event's lines, metrics and publications; the step for the host, if any. Synchronous
    /// and never inlined into `follow`, so its locals stay on the thread's stack: inlined, they
    /// made the loop's async frame 6 KiB, kept for the daemon's whole life (Benchmarks/README.md,
    /// issue 54's fourth slice).
    @inline(never)
    func take(_ event: LogindClient.Event, _ state: inout FollowState, metrics: LogindMetrics) -> FollowStep? {
        switch event {
        case .logindFound(let delayMax):
            if state.saidMissing || state.wasLost {
                logger.notice("logind is on the bus \(state.wasLost ? "again" : "now"): following sleep and shutdown")
            } else if !state.saidFollowing {
                logger.info("following logind: sleep, shutdown\(session.map { " and the screen lock of \($0)" } ?? "")")
            }
            state.saidFollowing = true
            state.saidMissing = false
            state.wasLost = false
            logger.debug("logind waits up to \(delayMax.configText) for delay inhibitors")
        case .logindMissing(let reason):
            if !state.saidMissing {
                logger.notice("logind is not on the system bus (\(reason)): sleep and shutdown reach the services only by signal until it comes")
            }
            state.saidMissing = true
        case .inhibitorTaken(let what):
            state.refused.remove(what)
            logger.debug("holding a delay inhibitor for \(what.rawValue)")
        case .inhibitorRefused(let what, let reason, let accessDenied):
            // Said once: a refusal that comes back after every resume, or for the other
            // kind for the same reason (polkit), says nothing new.
            guard state.refused.insert(what).inserted, !(accessDenied && state.saidAccessDenied) else { return nil }
            if accessDenied {
                state.saidAccessDenied = true
                logger.warning("logind refused the delay inhibitors (\(reason)): the machine may sleep or shut down before the services saved their state; polkit decides: install polkitd (apt-get install polkitd), whose default rules let any user take a delay inhibitor. The signals work as ever.")
            } else {
                logger.warning("logind refused a delay inhibitor for \(what.rawValue) (\(reason)): the machine may \(what == .sleep ? "sleep" : "shut down") before the services saved their state")
            }
        case .prepare(let what, starting: true, let number, let at):
            if what == .sleep { state.sleptAt = at }
            metrics.countPrepare(what)
            return .prepare(what, number: number)
        case .prepare(let what, starting: false, _, let at):
            // As the loop received logind's signals: a slow saving request is not sleep.
            if what == .sleep, let sleptAt = state.sleptAt {
                host.bus.publish(MachineDidResume(asleep: at - sleptAt))
            }
            if what == .sleep { state.sleptAt = nil }
            return .resume(after: what, saying: true)
        case .unavailable(let reason):
            logger.notice("logind not followed: the system bus went away (\(reason)); sleep and shutdown reach the services only by signal")
            // Its PrepareForSleep(false) will not come: a sleep the host waits on is over.
            // A shutdown is not undone by a bus that went away (dbus stops during one).
            return .resume(after: .sleep, saying: false)
        case .lost(let reason):
            state.wasLost = true
            logger.notice("logind: lost the system bus (\(reason)); connecting again")
            return .resume(after: .sleep, saying: false)
        case .watching(let id):
            state.saidNoSession = false
            logger.notice("following the screen lock of logind session \(id) (host.logind-session: \(session.map { "\($0)" } ?? "none"))")
        case .noSession(let reason):
            if !state.saidNoSession {
                // Usual on a server (auto, no one logged in); worth a notice when the config named one.
                logger.log(level: session == .auto ? .info : .notice, "no logind session's screen lock to follow (\(reason)); followed once there is one")
            }
            // The screen rule keeps its last word: only a session's own Unlock (or
            // LockedHint) unlocks, so an error or a session that went away fails closed.
            state.saidNoSession = true
        case .sessionsNotFollowed(let reason):
            logger.notice("logind sessions are not followed as they come and go (\(reason)): the session found at start stays the one whose screen lock is followed")
        case .screen(let locked, let id):
            guard state.screenLocked != locked else { return nil }
            // Not locked at the start: nothing to say.
            if state.screenLocked != nil || locked {
                logger.info("the screen of logind session \(id) is \(locked ? "locked" : "unlocked")", metadata: ["cause": "screen-lock"])
                host.bus.publish(ScreenLockDidChange(isLocked: locked, session: id))
            }
            state.screenLocked = locked
        }
        return nil
    }
}

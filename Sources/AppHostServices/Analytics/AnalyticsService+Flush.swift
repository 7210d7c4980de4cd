import AppHost
import Logging
import Synchronization

/// Recording events into the day's counts, and flushing them to the store: at a phase's end,
/// periodically, and at terminate.
extension AnalyticsService {
    func record(_ kind: AnalyticsEvent.Kind, first: Bool? = nil, previousExit: String? = nil, exitCause: String? = nil, level: String? = nil, service: String? = nil, seconds: Double? = nil, cause: String? = nil) {
        let startTimer = state.withLock { state in
            state.store?.record(kind, first: first, previousExit: previousExit, exitCause: exitCause, seconds: seconds, level: level, service: service, cause: cause) ?? false
        }
        if startTimer { wake.yield() }
    }

    /// Turns the time since the phase began into a time event and ends the phase.
    func closePhase(_ state: inout State) {
        guard let phase = state.phase else { return }
        let seconds = Double((ContinuousClock.now - state.phaseStart).microseconds) / 1_000_000
        _ = state.store?.record(phase == .foreground ? .foregroundTime : .backgroundTime, seconds: seconds)
        state.phase = nil
    }

    /// Writes pending events with fsync; nothing to do when none are pending.
    public func flush() throws {
        _ = try state.withLock { state in
            try state.store?.flush(compactAfter: state.settings.compactAfter)
        }
    }

    /// Flushes, and says at error level what the flush had to repair (a state directory deleted
    /// under the daemon), whichever flush found it: a hook's or the timer's.
    func flush(reportingTo logger: Logger) throws {
        defer {
            if let notice = state.withLock({ $0.store?.takeRepairNotice() }) {
                logger.error("analytics: \(notice)")
            }
        }
        try flush()
    }

    /// Folds the log and the pending records into the summary; false, with a warning, when it
    /// could not (the caller then flushes: nothing is lost).
    func foldLog(reportingTo logger: Logger) -> Bool {
        do {
            try state.withLock { state throws(AnalyticsStore.Failure) in try state.store?.foldAll() }
            return true
        } catch {
            logger.warning("analytics: could not fold the event log into \(AnalyticsStore.summaryName) at terminate (\(error)); the events are appended to \(AnalyticsStore.logName) instead")
            return false
        }
    }

    /// Flushes what launch recorded, then sleeps until an event is pending, waits one interval
    /// (the one of low power mode when the wait begins in it) and flushes; an idle service never
    /// wakes up, and a wake-up whose events a hook flushed already starts no wait.
    func flushPeriodically(_ application: ApplicationHandle) async {
        flushLogging(application.logger)
        keepUnflushed(application)
        for await _ in wakeups {
            guard state.withLock({ $0.store?.pendingCount ?? 0 }) > 0 else { continue }
            let interval = flushInterval(application)
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            flushLogging(application.logger)
            keepUnflushed(application)
        }
    }

    /// Hands the host what is not flushed yet, so a kill before the next flush loses nothing.
    func keepUnflushed(_ application: ApplicationHandle) {
        application.keepRestorableState(state.withLock { $0.store?.pending ?? [] })
    }

    func flushLogging(_ logger: Logger) {
        do {
            try flush(reportingTo: logger)
        } catch {
            logger.error("analytics flush failed: \(error)")
        }
    }
}

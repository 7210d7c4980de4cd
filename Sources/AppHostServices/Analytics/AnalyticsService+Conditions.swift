import AppHost

/// The machine's conditions analytics times: offline, low power mode, on battery.
extension AnalyticsService {
    /// A condition timed from when it begins to when it ends.
    enum TimedCondition: CaseIterable {
        case offline, lowPower, onBattery

        var kind: AnalyticsEvent.Kind {
            switch self {
            case .offline: .offlineTime
            case .lowPower: .lowPowerTime
            case .onBattery: .batteryTime
            }
        }

        func holds(_ network: NetworkPath, _ power: PowerState) -> Bool {
            switch self {
            case .offline: network.status == .unavailable
            case .lowPower: power.isLowPowerModeEnabled
            case .onBattery: power.isOnBattery
            }
        }
    }

    /// Starts the clock of each condition that began, and records the time of each that ended.
    func updateConditions(_ application: ApplicationHandle) {
        let (network, power) = (application.networkPath, application.powerState)
        state.withLock { state in
            for condition in TimedCondition.allCases {
                let holds = condition.holds(network, power)
                if holds, state.conditionsSince[condition] == nil {
                    state.conditionsSince[condition] = .now
                } else if !holds, let since = state.conditionsSince.removeValue(forKey: condition) {
                    Self.recordTime(of: condition, since: since, in: &state)
                }
            }
        }
        keepUnflushed(application)
    }

    /// Records the time of each condition so far (before a flush, so a kill loses little of
    /// it); `ending`: the conditions are no longer timed.
    func bankConditions(_ state: inout State, ending: Bool = false) {
        let now = ContinuousClock.now
        for (condition, since) in state.conditionsSince {
            Self.recordTime(of: condition, since: since, in: &state)
            state.conditionsSince[condition] = ending ? nil : now
        }
    }

    private static func recordTime(of condition: TimedCondition, since: ContinuousClock.Instant, in state: inout State) {
        let seconds = Double((ContinuousClock.now - since).microseconds) / 1_000_000
        guard seconds > 0 else { return }
        _ = state.store?.record(condition.kind, seconds: seconds)
    }

    /// How long pending events may wait now: longer in low power mode.
    func flushInterval(_ application: ApplicationHandle) -> Duration {
        let settings = currentSettings
        return application.powerState.isLowPowerModeEnabled ? settings.lowPowerFlushInterval : settings.flushInterval
    }
}

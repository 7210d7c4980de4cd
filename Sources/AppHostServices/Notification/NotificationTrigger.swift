import AppHost

/// What a notification can be about; the `on:` setting lists them by name.
enum NotificationTrigger: Sendable, Hashable {
    /// A lifecycle event, by `LifecycleEvent.name` (`didEnterBackground`, `didReceiveMemoryWarning.critical`).
    case event(String)
    /// A service's hook overran its deadline (any `LifecycleEventRecord` with overruns).
    case overran
    /// A reload was refused (`ConfigurationReloadDidFail`).
    case reloadFailed
    /// The session locked (`SessionLockDidChange`).
    case sessionLocked
    /// The session unlocked (`SessionLockDidChange`).
    case sessionUnlocked

    /// Lifecycle events that can notify: those the host publishes a record for while the
    /// service's run loop is alive (not `willFinishLaunching`, `didUpdateConfiguration`, and not
    /// `willTerminate`, whose record comes after the run loop stopped).
    static let eventNames: [String] = LifecycleEvent.allNames.filter {
        !["willFinishLaunching", "didUpdateConfiguration", "willTerminate"].contains($0)
    }

    /// The names `on:` accepts; `didReceiveMemoryWarning` means both levels.
    static let validNames: [String] = eventNames + ["didReceiveMemoryWarning", "overran", "reloadFailed", "sessionLocked", "sessionUnlocked"]

    /// What notifies when `on:` is not given: things an operator wants to hear about.
    static let defaultNames = ["didEnterBackground", "didReceiveMemoryWarning.critical", "reloadFailed", "overran"]

    /// The triggers one `on:` entry stands for; nil for an unknown name.
    static func parse(_ name: String) -> [NotificationTrigger]? {
        switch name {
        case "overran": [.overran]
        case "reloadFailed": [.reloadFailed]
        case "sessionLocked": [.sessionLocked]
        case "sessionUnlocked": [.sessionUnlocked]
        case "didReceiveMemoryWarning": MemoryWarningLevel.allCases.map { .event(LifecycleEvent.didReceiveMemoryWarning($0).name) }
        default: eventNames.contains(name) ? [.event(name)] : nil
        }
    }
}

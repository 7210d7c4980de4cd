/// One hook call the host fans out to every service.
public enum LifecycleEvent: Sendable, Hashable, CustomStringConvertible {
    /// First launch step.
    case willFinishLaunching
    /// Second launch step.
    case didFinishLaunching
    /// Launched, or back in the foreground.
    case didBecomeActive
    /// Leaving the active state.
    case willResignActive
    /// In the background.
    case didEnterBackground
    /// Returning to the foreground.
    case willEnterForeground
    /// The system wants memory back, this hard.
    case didReceiveMemoryWarning(MemoryWarningLevel)
    /// The clock, the time zone or the local day changed.
    case significantTimeChange
    /// The network path changed.
    case networkDidChange
    /// The power state changed.
    case powerStateDidChange
    /// The session is locking.
    case protectedDataWillBecomeUnavailable
    /// The session unlocked.
    case protectedDataDidBecomeAvailable
    /// The service's last call.
    case willTerminate
    /// The service's settings changed on reload.
    case didUpdateConfiguration

    /// Which way the fan-out walks the services.
    public enum Direction: Sendable, Hashable {
        /// Registration order: the first service (the logger) is up first.
        case up
        /// Reverse registration order: the first service is down last.
        case down
    }

    /// Going-up events run in registration order, going-down events in reverse.
    public var direction: Direction {
        switch self {
        case .willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willEnterForeground,
            .didReceiveMemoryWarning, .significantTimeChange, .networkDidChange, .powerStateDidChange, .protectedDataDidBecomeAvailable, .didUpdateConfiguration:
            .up
        case .willResignActive, .didEnterBackground, .protectedDataWillBecomeUnavailable, .willTerminate:
            .down
        }
    }

    /// The `ApplicationService` method this event calls, as logs and `STATUS=` name it.
    public var hookName: String {
        switch self {
        case .willFinishLaunching: "applicationWillFinishLaunching"
        case .didFinishLaunching: "applicationDidFinishLaunching"
        case .didBecomeActive: "applicationDidBecomeActive"
        case .willResignActive: "applicationWillResignActive"
        case .didEnterBackground: "applicationDidEnterBackground"
        case .willEnterForeground: "applicationWillEnterForeground"
        case .didReceiveMemoryWarning: "applicationDidReceiveMemoryWarning"
        case .significantTimeChange: "applicationSignificantTimeChange"
        case .networkDidChange: "applicationNetworkDidChange"
        case .powerStateDidChange: "applicationPowerStateDidChange"
        case .protectedDataWillBecomeUnavailable: "applicationProtectedDataWillBecomeUnavailable"
        case .protectedDataDidBecomeAvailable: "applicationProtectedDataDidBecomeAvailable"
        case .willTerminate: "applicationWillTerminate"
        case .didUpdateConfiguration: "applicationDidUpdateConfiguration"
        }
    }

    /// A short stable name for logs and the environment of `exec` programs (`didEnterBackground`).
    public var name: String {
        switch self {
        case .willFinishLaunching: "willFinishLaunching"
        case .didFinishLaunching: "didFinishLaunching"
        case .didBecomeActive: "didBecomeActive"
        case .willResignActive: "willResignActive"
        case .didEnterBackground: "didEnterBackground"
        case .willEnterForeground: "willEnterForeground"
        case .didReceiveMemoryWarning(.warning): "didReceiveMemoryWarning.warning"
        case .didReceiveMemoryWarning(.critical): "didReceiveMemoryWarning.critical"
        case .significantTimeChange: "significantTimeChange"
        case .networkDidChange: "networkDidChange"
        case .powerStateDidChange: "powerStateDidChange"
        case .protectedDataWillBecomeUnavailable: "protectedDataWillBecomeUnavailable"
        case .protectedDataDidBecomeAvailable: "protectedDataDidBecomeAvailable"
        case .willTerminate: "willTerminate"
        case .didUpdateConfiguration: "didUpdateConfiguration"
        }
    }

    public var description: String { name }

    /// Every event once, with both memory-warning levels; for config validation and docs.
    package static let allNames: [String] = [
        LifecycleEvent.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .willResignActive,
        .didEnterBackground, .willEnterForeground, .didReceiveMemoryWarning(.warning),
        .didReceiveMemoryWarning(.critical), .significantTimeChange, .networkDidChange, .powerStateDidChange, .protectedDataWillBecomeUnavailable,
        .protectedDataDidBecomeAvailable, .willTerminate, .didUpdateConfiguration,
    ].map(\.name)
}

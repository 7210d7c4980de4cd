/// One pluggable concern of the application (logging, analytics, session lock, ...), told about
/// the lifecycle the way `UIApplicationDelegate` is.
///
/// Every hook has a default that does nothing, so a service implements only what it needs. The
/// host calls a service's hooks one at a time and in lifecycle order, each under a deadline;
/// a hook that overruns is reported and the host moves on, and the service's next event waits
/// until the overrunning hook returns. A non-launch hook that throws is reported in the log and
/// the status; the service keeps receiving events.
public protocol ApplicationService: Sendable {
    /// First launch step. Return `false` or throw to refuse to launch.
    ///
    /// Result rule: a *required* service that refuses stops the launch: services launched before
    /// it get `applicationWillTerminate` in reverse order and the launch fails naming this
    /// service. An *optional* service that refuses is disabled and reported, and the launch goes
    /// on. A refusal never keeps any other service from being asked.
    func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool

    /// Second launch step, after `willFinishLaunching` of the same service succeeded.
    ///
    /// Result rule: as for `willFinishLaunching`; the service counts as launched only when both
    /// steps returned `true`.
    func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool

    /// The application is active: launched, or back in the foreground.
    func applicationDidBecomeActive(_ application: ApplicationHandle) async throws
    /// The application is about to leave the active state (first half of going to background).
    func applicationWillResignActive(_ application: ApplicationHandle) async throws
    /// The application is in the background: flush, release, lock.
    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws
    /// The application is about to return to the foreground.
    func applicationWillEnterForeground(_ application: ApplicationHandle) async throws
    /// The system wants memory back; the host trims its heap after every service was told.
    func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws
    /// The time the machine keeps changed under the service: the clock was set, the time zone
    /// changed, the local day changed at midnight, or daylight saving time began or ended.
    /// `ServiceContext.current?.significantTimeChange` says which (several, when they came
    /// together). Reaches the services in any running state, the background included.
    func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws
    /// The network path changed (`application.networkPath`): hold or resume what needs the
    /// network, or what costs on an expensive path. Any running state, the background included.
    func applicationNetworkDidChange(_ application: ApplicationHandle) async throws
    /// The power state changed (`application.powerState`): do less in low power mode or on a
    /// low battery. Any running state, the background included.
    func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws
    /// The session is locking: wipe or stop using protected data.
    func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws
    /// The session unlocked: protected data may be read again.
    func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws
    /// Last call before the service is dropped, at shutdown, on rollback or when a reload removes it.
    func applicationWillTerminate(_ application: ApplicationHandle) async throws

    /// The service's settings section changed on reload; `application.configuration` is the new
    /// one. Return `.applied` to keep running, or `.restartRequired` (the default) to be
    /// terminated and launched again with the new settings. Throwing counts as `.restartRequired`.
    func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate

    /// Long-running work the service owns (timers, bus subscriptions). The host runs it beside the
    /// lifecycle, from launch until the service terminates, and cancels it then. Only hosts that
    /// `run()` (as a `Service` or in the daemon) start it.
    ///
    /// When it returns or throws on its own, the descriptor's `RestartPolicy` decides: by default
    /// it is not run again. A policy that restarts it calls it again on the same instance (or, with
    /// `RestartPolicy.Scope.instance`, on a new one), so opt in only when it can start over:
    /// make what it iterates inside it, not once in `init`.
    func run(_ application: ApplicationHandle) async throws
}

extension ApplicationService {
    public func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool { true }
    public func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool { true }
    public func applicationDidBecomeActive(_ application: ApplicationHandle) async throws {}
    public func applicationWillResignActive(_ application: ApplicationHandle) async throws {}
    public func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {}
    public func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {}
    public func applicationDidReceiveMemoryWarning(_ application: ApplicationHandle, level: MemoryWarningLevel) async throws {}
    public func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {}
    public func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {}
    public func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {}
    public func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {}
    public func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {}
    public func applicationWillTerminate(_ application: ApplicationHandle) async throws {}
    public func application(_ application: ApplicationHandle, didUpdateConfiguration configuration: ServiceSection) async throws -> ConfigurationUpdate {
        .restartRequired
    }
    public func run(_ application: ApplicationHandle) async throws {}
}

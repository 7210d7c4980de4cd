/// Where the host keeps what launch options are made of: the launch count, the installation id,
/// and whether the previous run ended cleanly. The core only asks; the daemon gives it a store of
/// files in the state directory (`LaunchStateFiles` in AppHostSystemd). Without one, every launch
/// is a first launch.
public protocol LaunchStateStorage: Sendable {
    /// Counts this launch, marks the run as in progress, and returns the options for it.
    func beginLaunch() throws -> LaunchOptions
    /// Makes what `beginLaunch()` wrote survive a power loss. The host calls it once the launch
    /// is over and reported (after `READY=1`), so a sync to disk is not on the way to readiness;
    /// until then a crash of the process loses nothing, only a crash of the machine might.
    func makeLaunchDurable() throws
    /// Records that the run `options` describe ended cleanly: every service got its last call.
    /// Returns a remark for the log when something had to be repaired on the way (the state
    /// was deleted while the run went on and was written again from `options`).
    func markCleanExit(of options: LaunchOptions) throws -> String?
    /// Keeps why the run is unhealthy now (nil: healthy again) beside the run's in-progress
    /// mark, for the next launch's `previousHealthProblem` if this run ends uncleanly (systemd's
    /// watchdog). The host calls it when its health changes.
    func recordHealthProblem(_ problem: String?) throws
}

extension LaunchStateStorage {
    /// Nothing to do for a store whose `beginLaunch()` is durable when it returns.
    public func makeLaunchDurable() throws {}
    /// A store that does not keep the health problem.
    public func recordHealthProblem(_ problem: String?) throws {}
}

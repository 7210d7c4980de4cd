/// Where the host keeps what launch options are made of: the launch count, the installation id,
/// and whether the previous run ended cleanly. The core only asks; the daemon gives it a store of
/// files in the state directory (`LaunchStateStore` in AppHostSystemd). Without one, every launch
/// is a first launch.
///
/// A launch is recorded in two steps, so that a slow disk delays `READY=1` but no service:
/// `beginLaunch()` decides (and throws for a state it cannot use) before the first hook, and
/// `commitLaunch(_:)` makes the decision durable while the services launch. The host waits for
/// the commit before the launch ends, whichever way it ends.
public protocol LaunchStateStorage: Sendable {
    /// Counts this launch, marks the run as in progress, and returns the options for it.
    func beginLaunch() throws -> LaunchOptions
    /// Makes the launch `options` describe durable. Called once after `beginLaunch()`, in a task
    /// of its own beside the launch hooks; a failure fails the launch, and the services that had
    /// launched are terminated.
    func commitLaunch(_ options: LaunchOptions) throws
    /// Records that the run `options` describe ended cleanly: every service got its last call.
    /// Returns a remark for the log when something had to be repaired on the way (the state
    /// was deleted while the run went on and was written again from `options`).
    func markCleanExit(of options: LaunchOptions) throws -> String?
}

extension LaunchStateStorage {
    /// Nothing to commit: for a store whose `beginLaunch()` is durable on its own.
    public func commitLaunch(_ options: LaunchOptions) throws {}
}

import Logging

/// The loop's calls into the launch state, whose failures cost the next launch a fact, not the
/// run: each is logged.
extension LaunchStateStorage {
    /// Syncs the launch state `beginLaunch()` wrote.
    func makeLaunchDurable(logger: Logger) {
        do {
            try makeLaunchDurable()
        } catch {
            logger.warning("launch state not synced to disk: \(error)")
        }
    }

    /// Records that the run that `options` launched ended cleanly.
    func markCleanExit(of options: LaunchOptions, logger: Logger) {
        do {
            if let remark = try markCleanExit(of: options) {
                logger.error("launch state: \(remark)")
            }
        } catch {
            logger.error("could not record the clean exit", metadata: ["error": "\(error)"])
        }
    }
}

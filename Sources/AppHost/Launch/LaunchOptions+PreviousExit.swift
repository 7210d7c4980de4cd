import Logging

extension LaunchOptions {
    /// The launch's line about how the previous run ended, when the launch state can tell.
    func logPreviousExit(to logger: Logger) {
        guard let cause = previousExitCause else { return }
        let metadata: Logger.Metadata = ["exit_cause": "\(cause)", "launch_count": "\(launchCount)"]
        switch cause {
        case .clean:
            logger.info("launch \(launchCount); the previous run ended cleanly", metadata: metadata)
        case .unknown:
            logger.notice("launch \(launchCount); the previous run ended uncleanly, cause unknown (no exit record: a power loss, a host crash, or a kill outside systemd)", metadata: metadata)
        default:
            logger.notice("launch \(launchCount); the previous run ended: \(cause)", metadata: metadata)
        }
        if let problem = previousHealthProblem {
            logger.notice("the previous run was unhealthy when it ended: \(problem)", metadata: ["health": "\(problem)", "exit_cause": "\(cause)"])
        }
    }
}

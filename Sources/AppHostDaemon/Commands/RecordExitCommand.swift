import AppHost
import AppHostSystemd
import Logging

/// `apphostd record-exit`: records why the daemon's process ended, as systemd describes it to
/// the unit's `ExecStopPost=` (`$SERVICE_RESULT`, `$EXIT_CODE`, `$EXIT_STATUS`), in the state
/// directory; the next launch names it (`LaunchOptions.previousExitCause`) and analytics counts
/// it. The shipped unit runs it with a `-` prefix, so it can never fail the unit's stop; it
/// reads three variables and writes one small file, so it never hangs either.
struct RecordExitCommand {
    /// `--config`: take the state directory from this config file.
    let config: String?
    /// `--state-directory`: the state directory (overrides `--config`).
    let stateDirectory: String?
    /// The process environment, where systemd puts the variables.
    let environment: [String: String]

    /// Records the cause: 0 when recorded; 64 without `$SERVICE_RESULT` (not run by systemd);
    /// 65 for values systemd never writes (nothing recorded); 78 when the config cannot say
    /// where the state directory is; 73 when the file cannot be written.
    func run() -> ExitStatus {
        // Through the daemon's own log backend: the journal under systemd (structured, with
        // EXIT_CAUSE=), stderr by hand.
        let identifier = ApphostdCommand.identity().commandName
        let environment = self.environment
        let logger = Logger(label: identifier) { JournalLogHandler(label: $0, identifier: identifier, environment: environment) }
        let cause: ExitCause
        do {
            cause = try ExitCause(serviceResult: environment["SERVICE_RESULT"], exitCode: environment["EXIT_CODE"], exitStatus: environment["EXIT_STATUS"])
        } catch {
            logger.error("record-exit: \(error); nothing recorded")
            return error == .missing(variable: "SERVICE_RESULT") ? .usage : .badInput
        }
        let directory: String
        do {
            let (found, note) = try AnalyticsCommand.stateDirectory(
                stateDirectory: stateDirectory, config: config, environment: environment,
                registry: ApphostdCommand.registry(), identity: ApphostdCommand.identity()
            )
            if let note { logger.notice("record-exit: \(note)") }
            directory = found
        } catch {
            // The config that broke the start must not lose the record: systemd's
            // $STATE_DIRECTORY is where the daemon keeps it by default.
            guard stateDirectory == nil, let fallback = ConfigurationLoader.systemdStateDirectory(environment: environment) else {
                for line in error.lines(commandName: identifier) { logger.error("record-exit: \(line)") }
                logger.error("record-exit: cannot tell where the state directory is; nothing recorded")
                return .badConfiguration
            }
            logger.notice("record-exit: the config cannot be read (\(error.summary)); recording in $STATE_DIRECTORY, \(fallback)")
            directory = fallback
        }
        do {
            try LaunchStateFiles(directory: directory).recordExit(cause)
        } catch {
            logger.error("record-exit: \(error); nothing recorded")
            return .cannotWrite
        }
        logger.info("record-exit: the process ended: \(cause) (recorded in \(directory) for the next launch)", metadata: ["exit_cause": "\(cause)"])
        markMetricsNotRunning(logger: logger)
        return .clean
    }

    /// A process that died (SIGKILL, a crash) could not write its last figures: the metrics
    /// textfile, if the config names one, is rewritten to say `notRunning`. Best effort: the
    /// exit is already recorded.
    func markMetricsNotRunning(logger: Logger) {
        guard let config,
            let path = try? ConfigurationLoader(registry: ApphostdCommand.registry(), environment: environment, stateDirectoryName: ApphostdCommand.identity().stateDirectoryName)
                .load(path: config).metrics.textfile
        else { return }
        do {
            if try MetricsTextfileEdge.markNotRunning(path: path) {
                logger.info("record-exit: \(path) says notRunning")
            }
        } catch {
            logger.warning("record-exit: cannot mark the metrics textfile notRunning: \(error)")
        }
    }
}

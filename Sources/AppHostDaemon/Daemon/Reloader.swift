import AppHost
import AppHostSystemd
import Logging
import Synchronization

/// SIGHUP: reload as one transaction. The host reads the file on its own loop, in order with
/// the other requests; a bad file keeps the running configuration, says why in the log and
/// `STATUS=`, and still ends with `READY=1`. How it ended is recorded in the state directory
/// (`ReloadRecord`) for `apphostd reload`, which waits for it.
struct Reloader: Sendable {
    let configPath: String
    let loader: ConfigurationLoader
    let registry: ServiceRegistry
    let logger: Logger
    /// Where the record of each reload goes.
    let recorder: ReloadRecorder
    /// `host.metrics` as the daemon started with it: a reload cannot move the textfile.
    var metrics = DaemonConfiguration.Metrics()

    /// Reloads; records the outcome for `apphostd reload` when `recording` (a SIGHUP's), and
    /// returns it (a bus `Reload()`'s answer).
    @discardableResult
    func reload(host: PluggableApplicationHost, recording: Bool = true) async -> (applied: Bool, message: String) {
        let takenAt = SystemdNotifier.monotonicMicroseconds()
        let configPath = configPath, loader = loader, registry = registry, metrics = metrics, logger = logger
        let record: ReloadRecord
        let bootID = ReloadRecord.currentBootID
        do {
            let report = try await host.reload {
                let configuration = try loader.load(path: configPath)
                let descriptors = configuration.serviceDescriptors(registry: registry)
                // The file's level wins only when the file changed it: a level an operator set
                // with systemctl service-log-level stays across a reload of the same level.
                LogLevelControl.shared.applyConfigured(configuration.logLevel)
                if configuration.metrics != metrics {
                    logger.notice("host.metrics changed: it takes effect at the next start; the metrics textfile stays \(metrics.textfile ?? "off")")
                }
                return descriptors
            }
            let changes = [("added", report.added), ("removed", report.removed), ("updated", report.updated), ("restarted", report.restarted)]
                .filter { !$0.1.isEmpty }.map { "\($0.0) \($0.1.joined(separator: ", "))" }
            record = ReloadRecord(bootID: bootID, takenAt: takenAt, outcome: .applied, message: "reloaded \(configPath)" + (changes.isEmpty ? " (no service changed)" : ": " + changes.joined(separator: "; ")))
            // The reload's one journal line: `apphostd reload` under ExecReload= prints nothing
            // more to the journal.
            logger.info("\(record.message)")
        } catch {
            // The host logged why and kept the running configuration; a host on its way out
            // did not look at the file at all.
            let isStopping = [.terminating, .notRunning].contains(host.state)
            record = ReloadRecord(bootID: bootID, takenAt: takenAt, outcome: isStopping ? .notApplied : .refused, message: error.description)
        }
        if recording { recorder.record(record, logger: logger) }
        return (record.outcome == .applied, record.message)
    }
}

/// Writes the reload records one at a time, never an older one over a newer one: each SIGHUP is
/// handled on a task of its own, so two reloads can end together.
final class ReloadRecorder: Sendable {
    let stateDirectory: String
    private let lastTakenAt = Mutex<UInt64?>(nil)

    init(stateDirectory: String) {
        self.stateDirectory = stateDirectory
    }

    func record(_ record: ReloadRecord, logger: Logger) {
        lastTakenAt.withLock { last in
            if let last, record.takenAt < last { return }
            do {
                try record.write(to: stateDirectory)
                last = record.takenAt
            } catch {
                logger.error("could not record how the reload ended (apphostd reload waits for it): \(error)")
            }
        }
    }
}

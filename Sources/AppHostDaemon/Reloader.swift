import AppHost
import AppHostSystemd
import Logging

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
    let stateDirectory: String

    func reload(host: PluggableApplicationHost) async {
        let takenAt = SystemdNotifier.monotonicMicroseconds()
        let configPath = configPath, loader = loader, registry = registry
        let record: ReloadRecord
        do {
            let report = try await host.reload {
                let configuration = try loader.load(path: configPath)
                let descriptors = configuration.serviceDescriptors(registry: registry)
                LogLevelControl.shared.level = configuration.logLevel
                return descriptors
            }
            logger.info("reloaded \(configPath)")
            let changes = [("added", report.added), ("removed", report.removed), ("updated", report.updated), ("restarted", report.restarted)]
                .filter { !$0.1.isEmpty }.map { "\($0.0) \($0.1.joined(separator: ", "))" }
            record = ReloadRecord(takenAt: takenAt, isApplied: true, message: "reloaded \(configPath)" + (changes.isEmpty ? " (no service changed)" : ": " + changes.joined(separator: "; ")))
        } catch {
            // The host logged why and kept the running configuration.
            record = ReloadRecord(takenAt: takenAt, isApplied: false, message: error.description)
        }
        do {
            try record.write(to: stateDirectory)
        } catch {
            logger.error("could not record how the reload ended (apphostd reload waits for it): \(error)")
        }
    }
}

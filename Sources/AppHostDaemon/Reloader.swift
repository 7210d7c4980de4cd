import AppHost
import AppHostSystemd
import Logging

/// SIGHUP: reload as one transaction. The host reads the file on its own loop, in order with
/// the other requests; a bad file keeps the running configuration, says why in the log and
/// `STATUS=`, and still ends with `READY=1`.
struct Reloader: Sendable {
    let configPath: String
    let loader: ConfigurationLoader
    let registry: ServiceRegistry
    let logger: Logger

    func reload(host: PluggableApplicationHost) async {
        let configPath = configPath, loader = loader, registry = registry
        do {
            try await host.reload {
                let configuration = try loader.load(path: configPath)
                let descriptors = configuration.serviceDescriptors(registry: registry)
                LogLevelControl.shared.level = configuration.logLevel
                return descriptors
            }
            logger.info("reloaded \(configPath)")
        } catch {
            // The host logged why and kept the running configuration.
        }
    }
}

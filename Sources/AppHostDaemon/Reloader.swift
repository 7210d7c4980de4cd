import AppHost
import AppHostSystemd
import Foundation
import Logging

/// SIGHUP: reload as one transaction. Parse and validate everything first; a bad file keeps the
/// running configuration, says why in the log and `STATUS=`, and still ends with `READY=1`.
struct Reloader: Sendable {
    let configPath: String
    let loader: ConfigurationLoader
    let registry: ServiceRegistry
    let notifier: SystemdNotifier
    let logger: Logger

    func reload(host: PluggableApplicationHost) async {
        notifier.reloading(status: "reloading \(configPath)")
        do {
            let configuration = try loader.load(path: configPath)
            try await host.reload(configuration.serviceDescriptors(registry: registry))
            LogLevelControl.shared.level = configuration.logLevel
            logger.info("reloaded \(configPath)", metadata: ["services": "\(configuration.services.map(\.name).joined(separator: ","))"])
        } catch {
            logger.error("reload refused, the running configuration stays: \(error)", metadata: ["config": "\(configPath)"])
            await host.setNote("reload failed: \(error)")
            host.bus.publish(ConfigurationReloadDidFail(message: "\(error)"))
        }
        notifier.ready(status: await host.status.description)
    }
}

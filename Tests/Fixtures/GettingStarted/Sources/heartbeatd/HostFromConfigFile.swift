import AppHost
import AppHostDaemon

/// README.md's "The host in your own ServiceGroup": the host on a config file instead of a
/// list in code, with the file's deadlines and state directory.
func hostFromConfigFile(registry: ServiceRegistry) throws -> PluggableApplicationHost {
    let configuration = try DaemonConfiguration(contentsOf: "/etc/my-program/config.yaml", registry: registry)
    let host = try PluggableApplicationHost(
        services: configuration.serviceDescriptors(registry: registry),
        configuration: configuration.hostConfiguration  // deadlines, state directory, launch state
    )
    return host
}

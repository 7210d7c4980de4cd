import AppHost
import AppHostSystemd

/// `apphostd restart SERVICE`: one service of the running daemon restarted, over the bus
/// (`org.apphost.Host1.RestartService`); waits until it runs again or failed to.
struct RestartCommand {
    let service: String
    let bus: DBusAddress
    let identity: DaemonIdentity
    /// Above a launch deadline's default (30 s): the restart runs the service's launch hooks.
    static let timeout = Duration.seconds(90)

    func run() -> ExitStatus {
        let busName = LogControlEdge.busName(commandName: identity.commandName)
        do {
            try HostDBusClient(busName: busName, bus: bus).restartService(service, timeout: Self.timeout)
        } catch {
            return StatusCommand.fail(error, command: "restart", busName: busName, bus: bus, identity: identity)
        }
        print("\(service) restarted")
        return .clean
    }
}

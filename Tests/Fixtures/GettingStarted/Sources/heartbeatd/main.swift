import AppHostDaemon
import AppHostServices
import Heartbeat

var registry = BuiltinServices.registry()
registry.register("heartbeat", summary: "Logs each launch and each flush") { try Heartbeat(configuration: $0) }
ApphostdCommand.main(
    registry: registry,
    identity: DaemonIdentity(commandName: "heartbeatd", version: "1.0.0", abstract: "Runs the heartbeat and the built-in services.")
)

import AppHostDaemon
import AppHostServices

// The daemon with the built-in services. A program with services of its own does the same with
// its own registry: `var registry = BuiltinServices.registry(); registry.register(...)`.
ApphostdCommand.main(registry: BuiltinServices.registry())

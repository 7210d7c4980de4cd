import Logging
import ServiceLifecycle

@_silgen_name("sd_notify") func sd_notify(_ unsetEnvironment: Int32, _ state: UnsafePointer<CChar>) -> Int32

/// Waits for the group's graceful shutdown, as apphostd's edge services do.
struct Idle: Service {
    func run() async throws {
        try? await gracefulShutdown()
    }
}

/// Sends READY=1 once the group runs it, then waits like the others.
struct Ready: Service {
    func run() async throws {
        _ = sd_notify(0, "READY=1")
        try? await gracefulShutdown()
    }
}

let logger = Logger(label: "service-group-floor") { _ in SwiftLogNoOpLogHandler() }
let services: [ServiceGroupConfiguration.ServiceConfiguration] =
    (1...4).map { .init(service: Idle(), serviceName: "idle-\($0)") } + [.init(service: Ready(), serviceName: "ready")]
let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm], cancellationSignals: [], logger: logger))
try await group.run()

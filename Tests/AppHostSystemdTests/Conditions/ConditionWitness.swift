import AppHost
import AppHostTestKit
import DBusTestSupport
import ServiceContextModule
import ServiceLifecycle

@testable import AppHostSystemd

/// Keeps what each condition hook read, with its request's cause.
struct ConditionWitness: ApplicationService {
    let told = TestLog<String>()

    func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        told.append("network \(application.networkPath); \(ServiceContext.current?.hostRequestCause ?? "-")")
    }

    func applicationPowerStateDidChange(_ application: ApplicationHandle) async throws {
        told.append("power \(application.powerState); \(ServiceContext.current?.hostRequestCause ?? "-")")
    }
}

/// The daemons' objects as the stand-ins serve them.
enum ConditionObjects {
    static func networkd(_ state: String) -> TestPropertyServer.Object {
        .init(path: "/org/freedesktop/network1", interface: "org.freedesktop.network1.Manager", properties: ["OperationalState": .string(state)])
    }

    static func networkManager(state: UInt32, connectivity: UInt32 = 4, metered: UInt32 = 2) -> TestPropertyServer.Object {
        .init(
            path: "/org/freedesktop/NetworkManager", interface: "org.freedesktop.NetworkManager",
            properties: ["State": .uint32(state), "Connectivity": .uint32(connectivity), "Metered": .uint32(metered)]
        )
    }
}

/// A host with a witness, and the edge `makeEdge` builds for it on a loop of its own, running
/// for the length of `body`.
func withConditionEdge<Edge: Service>(
    loopName: String, _ makeEdge: (PluggableApplicationHost, EdgeEventLoop) -> Edge, _ body: (ConditionWitness) async throws -> Void
) async throws {
    let witness = ConditionWitness()
    let loop = try EdgeEventLoop(name: loopName)
    defer {
        loop.close()
        loop.waitUntilEnded()
    }
    try await withTestHost([ServiceDescriptor(name: "w", service: witness)]) { test in
        let edge = makeEdge(test.host, loop)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await edge.run() }
            try await body(witness)
            group.cancelAll()
        }
    }
}

import AppHost
import AppHostTestKit
import AppHostTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import AppHostSystemd

/// The daemon's bus name and its logind client on one loop speak through one connection to a bus
/// (dbus-daemon allows a user 256), and the client keeps it when the name is refused.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl"), "needs dbus-daemon and busctl (Debian packages dbus-daemon, systemd)"))
struct SharedBusConnectionTests {
    static let name = "org.apphost.sharetest"

    /// The unique names of this process's connections to the bus at `address`.
    static func connections(address: String) throws -> [String] {
        let listed = try LogControlEdgeTests.busctl(["list", "--unique", "--no-legend", "--no-pager"], address: address)
        let pid = "\(getpid())"
        return listed.output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 1 && fields[1] == pid ? String(fields[0]) : nil
        }
    }

    /// Runs the bus-name edge and the logind client on one loop, on `bus`, until `body` ends.
    func withBoth(on bus: TestSessionBus, logs: CapturedLogs, _ body: () async throws -> Void) async throws {
        let loop = try EdgeEventLoop(name: "test-share")
        defer {
            loop.close()
            loop.waitUntilEnded()
        }
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "a", service: IdleService())])
        let named = HostDBusEdge(busName: Self.name, identifier: "sharetest", host: nil, control: LogLevelControl(), bus: .address(bus.address), logger: logs.logger(), on: loop)
        let logind = LogindEdge(host: host, who: "sharetest", logger: logs.logger(), on: loop, session: nil, bus: .address(bus.address))
        try await host.withRunning {
            try await testGracefulShutdown { trigger in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { await named.run() }
                    group.addTask { await logind.run() }
                    try await body()
                    trigger.triggerGracefulShutdown()
                }
            }
        }
    }

    @Test("the bus name and logind's client share one connection: this process has one unique name on the bus")
    func oneConnectionForBoth() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let logs = CapturedLogs()
        try await withBoth(on: bus, logs: logs) {
            // Both are on once the name is owned and logind was asked for (it is not on this bus).
            let ready = try await eventually(timeout: .seconds(10), every: .milliseconds(20)) {
                let owned = try LogControlEdgeTests.busctl(["get-property", Self.name, "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1", "LogLevel"], address: bus.address).status == 0
                return owned && logs.messages.contains { $0.hasPrefix("logind is not on the system bus") }
            }
            #expect(ready, "\(logs.messages)")
            let unique = try Self.connections(address: bus.address)
            #expect(unique.count == 1, "this process's connections: \(unique)")
        }
        #expect(!logs.messages.contains { $0.hasPrefix("log control unavailable") }, "\(logs.messages)")
    }

    // Fails when a member set up on the closed connection of a pending reconnect: the join throws.
    @Test("logind's client that joins while the connection waits to reconnect is set up on the next connection")
    func aJoinDuringAReconnectWaitsForIt() async throws {
        var bus = try TestSessionBus.start()
        defer { bus.stop() }
        let address = bus.socketAddress
        let logs = CapturedLogs()
        let loop = try EdgeEventLoop(name: "test-share")
        defer {
            loop.close()
            loop.waitUntilEnded()
        }
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "a", service: IdleService())])
        let named = HostDBusEdge(busName: Self.name, identifier: "sharetest", host: nil, control: LogLevelControl(), bus: .address(address), logger: logs.logger(), on: loop)
        let logind = LogindEdge(host: host, who: "sharetest", logger: logs.logger(), on: loop, session: nil, bus: .address(address))
        try await host.withRunning {
            try await testGracefulShutdown { trigger in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { await named.run() }
                    #expect(await logs.first(timeout: .seconds(10)) { $0.message == "log control on the bus as \(Self.name)" } != nil, "\(logs.messages)")
                    bus.killed()
                    // The loss is handled; the next try is 100 ms away.
                    #expect(await logs.first(timeout: .seconds(10)) { $0.message.hasPrefix("log control: lost the bus") } != nil, "\(logs.messages)")
                    group.addTask { await logind.run() }
                    bus = try bus.relaunched()
                    let followed = await logs.first(timeout: .seconds(15)) { $0.message.hasPrefix("logind is not on the system bus") }
                    #expect(followed != nil, "\(logs.messages)")
                    #expect(!logs.messages.contains { $0.hasPrefix("logind not followed") }, "\(logs.messages)")
                    #expect(try Self.connections(address: bus.address).count == 1)
                    trigger.triggerGracefulShutdown()
                }
            }
        }
    }

    @Test("a bus name refused by the bus's policy takes its objects off the shared connection, and logind's client keeps the connection")
    func aRefusedNameLeavesTheConnectionToLogind() async throws {
        let bus = try TestSessionBus.start(mayOwnNames: false)
        defer { bus.stop() }
        let logs = CapturedLogs()
        try await withBoth(on: bus, logs: logs) {
            let refused = await eventually(timeout: .seconds(10), every: .milliseconds(20)) {
                logs.messages.contains { $0.hasPrefix("logind is not on the system bus") }
                    && logs.messages.contains { $0.hasPrefix("log control unavailable") }
            }
            #expect(refused, "\(logs.messages)")
            // The leave is carried out on the loop after the refusal is said: its object goes.
            var unique: [String] = []
            let gone = try await eventually(timeout: .seconds(10), every: .milliseconds(20)) {
                unique = try Self.connections(address: bus.address)
                guard let connection = unique.first else { return false }
                let served = try LogControlEdgeTests.busctl(["get-property", connection, "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1", "LogLevel"], address: bus.address)
                return served.status != 0
            }
            #expect(gone, "LogControl1 is still served on \(unique)")
            #expect(unique.count == 1, "this process's connections: \(unique)")
        }
    }
}

import AppHost
import AppHostTestKit
import AppHostTestSupport
import DBusTestSupport
import Foundation
import Logging
import Testing

@testable import AppHostSystemd

/// The network path's edge against stand-ins of networkd and NetworkManager on a private bus
/// (TestPropertyServer): what each says, which one decides, a source that is missing, goes and
/// comes back, and one that flaps. The real networkd is the PID-1 suites'.
@Suite struct NetworkPathEdgeTests {
    /// A host with a witness, and the edge following `source` on `bus`, for the length of `body`.
    func withEdge(
        _ source: NetworkPathSource, bus: TestSessionBus, logs: CapturedLogs = CapturedLogs(),
        _ body: (ConditionWitness) async throws -> Void
    ) async throws {
        try await withConditionEdge(loopName: "test-network", { host, loop in
            NetworkPathEdge(host: host, source: source, logger: logs.logger(), on: loop, bus: .address(bus.address))
        }, body)
    }

    @Test("networkd: routable is available, no-carrier is not, each change a request with cause network; the line names the source")
    func networkdDecides() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let networkd = try await TestPropertyServer.start(address: bus.address, name: "org.freedesktop.network1", objects: [ConditionObjects.networkd("routable")])
        let logs = CapturedLogs()
        try await withEdge(.networkd, bus: bus, logs: logs) { witness in
            #expect(await witness.told.first { _ in true } == "network available; network")
            #expect(await logs.first { $0.message == "following the network path from systemd-networkd" } != nil)
            networkd.set("OperationalState", at: "/org/freedesktop/network1", to: .string("no-carrier"))
            #expect(await witness.told.first(from: 1) { _ in true } == "network unavailable; network")
            let line = await logs.first { $0.message.hasPrefix("the network is unavailable") }
            #expect(line?.message == "the network is unavailable (systemd-networkd: OperationalState no-carrier)")
            #expect(line?.metadata["cause"] == "network")
        }
        await networkd.stop()
    }

    @Test("auto: NetworkManager first while both are there; ASLEEP changes nothing; metered is expensive; when it leaves, networkd's word")
    func networkManagerFirst() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let path = "/org/freedesktop/NetworkManager"
        let manager = try await TestPropertyServer.start(address: bus.address, name: "org.freedesktop.NetworkManager", objects: [ConditionObjects.networkManager(state: 70)])
        let networkd = try await TestPropertyServer.start(address: bus.address, name: "org.freedesktop.network1", objects: [ConditionObjects.networkd("no-carrier")])
        let logs = CapturedLogs()
        try await withEdge(.automatic, bus: bus, logs: logs) { witness in
            #expect(await witness.told.first { _ in true } == "network available; network")
            manager.set("State", at: path, to: .uint32(10))
            manager.set("Metered", at: path, to: .uint32(3))
            #expect(await witness.told.first(from: 1) { _ in true } == "network available, expensive; network", "asleep keeps the path; guess-yes is expensive")
            manager.set("State", at: path, to: .uint32(70))
            manager.set("Connectivity", at: path, to: .uint32(2))
            #expect(await witness.told.first(from: 2) { _ in true } == "network unavailable, expensive; network", "a captive portal is not the internet")
            manager.set("Connectivity", at: path, to: .uint32(4))
            #expect(await witness.told.first(from: 3) { _ in true } == "network available, expensive; network")
            await manager.leave()
            #expect(await witness.told.first(from: 4) { _ in true } == "network unavailable; network", "networkd's no-carrier")
            #expect(await logs.first { $0.message == "the network path now comes from systemd-networkd (not NetworkManager)" } != nil)
        }
        await manager.stop()
        await networkd.stop()
    }

    @Test("no source: unknown and one info line, nothing started by asking; one that comes is followed, one that goes is unknown again")
    func missingSources() async throws {
        let traces = try makeTemporaryDirectory("apphost-activation")
        defer { try? FileManager.default.removeItem(atPath: traces) }
        let bus = try TestSessionBus.start(activatable: [
            "org.freedesktop.network1": "touch \(traces)/networkd", "org.freedesktop.NetworkManager": "touch \(traces)/NetworkManager",
        ])
        defer { bus.stop() }
        let logs = CapturedLogs()
        try await withEdge(.automatic, bus: bus, logs: logs) { witness in
            let none = await logs.first { $0.message.hasPrefix("no source of the network path") }
            #expect(none?.message == "no source of the network path on the system bus (NetworkManager or systemd-networkd): it stays unknown until one comes")
            #expect(none?.level == .info)
            let networkd = try await TestPropertyServer.start(address: bus.address, name: "org.freedesktop.network1", objects: [ConditionObjects.networkd("routable")])
            #expect(await witness.told.first { _ in true } == "network available; network", "followed once it came")
            #expect(witness.told.count == 1, "the missing sources told the services nothing")
            let following = await logs.first { $0.message == "following the network path from systemd-networkd" }
            #expect(following?.level == .notice, "said louder after the log said there was none")
            await networkd.leave()
            #expect(await witness.told.first(from: 1) { _ in true } == "network unknown; network")
            let gone = await logs.first { $0.message.hasPrefix("systemd-networkd is gone") }
            #expect(gone?.message == "systemd-networkd is gone (left the bus): the network path is unknown until NetworkManager or systemd-networkd is on the system bus")
            await networkd.comeBack()
            #expect(await witness.told.first(from: 2) { _ in true } == "network available; network", "followed again")
            #expect(logs.messages.filter { $0.hasPrefix("no source of the network path") }.count == 1)
            await networkd.stop()
        }
        let started = try FileManager.default.contentsOfDirectory(atPath: traces)
        #expect(started.isEmpty, "asking started \(started): the calls must go out with auto-start off")
    }

    @Test("a source that flaps 1,000 times: far fewer calls, the last value wins")
    func flapsMerge() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let path = "/org/freedesktop/NetworkManager"
        let manager = try await TestPropertyServer.start(address: bus.address, name: "org.freedesktop.NetworkManager", objects: [ConditionObjects.networkManager(state: 70)])
        try await withEdge(.networkManager, bus: bus) { witness in
            #expect(await witness.told.first { _ in true } == "network available; network")
            for flap in 0..<1_000 { manager.set("State", at: path, to: .uint32(flap.isMultiple(of: 2) ? 20 : 70)) }
            // The one value the flaps never had: once told, nothing newer waits.
            manager.set("Metered", at: path, to: .uint32(1))
            #expect(await witness.told.first { $0 == "network available, expensive; network" } != nil)
            let calls = witness.told.count
            #expect(calls < 500, "\(calls) calls for 1,000 flaps")
            #expect(witness.told.all.last == "network available, expensive; network")
        }
        await manager.stop()
    }
}

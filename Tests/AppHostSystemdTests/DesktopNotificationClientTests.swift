@testable import AppHostSystemd
import AppHostTestSupport
import Dispatch
import Foundation
import Glibc
import DBusTestSupport
import Testing

/// The desktop transport, real: sd-bus on an edge loop against a private dbus-daemon and a
/// notification server of the test's.
@Suite struct DesktopNotificationClientTests {
    @Test func notifyReachesANotificationServerWithFreedesktopsArguments() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let server = try await TestNotificationServer.start(address: bus.address)
        let client = DesktopNotificationClient(bus: .address(bus.address))
        #expect(await client.unavailability() == nil)
        try await client.notify(appName: "apphostd-test", summary: "Configuration reload failed", body: "line 4: bad duration")
        let call = await server.calls.first { _ in true }
        #expect(call == DesktopNotificationCall(appName: "apphostd-test", replacesID: 0, icon: "", summary: "Configuration reload failed", body: "line 4: bad duration", expireTimeout: -1))
        await server.stop()
    }

    @Test func onAnEdgeLoopOfTheDaemonsTheCallsGoOutInOrder() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let server = try await TestNotificationServer.start(address: bus.address)
        let loop = try EdgeEventLoop(name: "test-notify")
        defer {
            loop.close()
            loop.waitUntilEnded()
        }
        let client = DesktopNotificationClient(bus: .address(bus.address), on: loop)
        try await client.notify(appName: "a", summary: "one", body: "1")
        try await client.notify(appName: "a", summary: "two", body: "2")
        #expect(await server.calls.first { $0.summary == "two" } != nil)
        #expect(server.calls.all.map(\.summary) == ["one", "two"])
        await server.stop()
    }

    @Test("sd-bus says whether the bus can be reached: not at a missing path nor at a regular file (off, with sd-bus's reason), at a listening socket yes")
    func theClientIsUnavailableWhereSdBusCannotConnect() async throws {
        let directory = try makeTemporaryDirectory("apphost-runtime")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let client = { DesktopNotificationClient(bus: .address("unix:path=\(directory)/bus")) }
        let missing = await client().unavailability()
        #expect(missing?.hasPrefix("no session bus at unix:path=\(directory)/bus: ") == true, "\(missing ?? "nil")")
        #expect(missing?.contains("No such file or directory") == true, "\(missing ?? "nil")")
        #expect(FileManager.default.createFile(atPath: directory + "/bus", contents: Data()))
        #expect(await client().unavailability() != nil, "a regular file is not a bus")
        try FileManager.default.removeItem(atPath: directory + "/bus")
        let listener = try Self.listen(at: directory + "/bus")
        defer { close(listener) }
        #expect(await client().unavailability() == nil)
    }

    @Test func aCallWithoutAServerFailsWithTheBussErrorAndTheNextGoesThroughOnceOneIsThere() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let client = DesktopNotificationClient(bus: .address(bus.address))
        let failure = await #expect(throws: (any Error).self) {
            try await client.notify(appName: "a", summary: "first", body: "")
        }
        #expect("\(failure.map { "\($0)" } ?? "")".contains("ServiceUnknown"), "\(String(describing: failure))")
        let server = try await TestNotificationServer.start(address: bus.address)
        try await client.notify(appName: "a", summary: "second", body: "")
        #expect(server.calls.all.map(\.summary) == ["second"])
        await server.stop()
    }

    @Test("a bus that never answers the authentication fails the call within its timeout, not sd-bus's 90 s")
    func aHungBusFailsTheCallWithinItsTimeout() async throws {
        let directory = try makeTemporaryDirectory("apphost-hung-bus")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Listening, never accepting: the connect succeeds, the authentication never ends.
        let listener = try Self.listen(at: directory + "/bus")
        defer { close(listener) }
        let client = DesktopNotificationClient(bus: .address("unix:path=\(directory)/bus"), callTimeout: .milliseconds(300))
        let start = ContinuousClock.now
        let failure = await #expect(throws: (any Error).self) {
            try await client.notify(appName: "a", summary: "s", body: "b")
        }
        #expect(ContinuousClock.now - start < .seconds(30), "bounded by the call's timeout")
        #expect("\(failure.map { "\($0)" } ?? "")".contains("no answer within"), "\(String(describing: failure))")
    }

    static func listen(at path: String) throws -> Int32 {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        try #require(bound == 0 && Glibc.listen(listener, 1) == 0)
        return listener
    }
}

extension DesktopNotificationClientTests {
    /// The daemon's end: the edge loop closes, then the notification service and its client go.
    /// The client's leave, queued after the close, is dropped; the loop's end then finishes the
    /// connection, which tells its members. It crashed when the member held the client's side
    /// unowned.
    @Test("a client dropped after its loop closed: the loop's end finishes the connection without it")
    func aClientDroppedAfterItsLoopClosed() async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let loop = try EdgeEventLoop(name: "test-notify")
        var client: DesktopNotificationClient? = DesktopNotificationClient(bus: .address(bus.address), on: loop)
        #expect(await client?.unavailability() == nil)
        // Hold the loop's thread, so that the close is queued and not yet carried out.
        let gate = DispatchSemaphore(value: 0)
        loop.perform { gate.wait() }
        loop.close()
        client = nil
        gate.signal()
        #expect(loop.waitUntilEnded() == 0, "the loop ended on its close")
    }
}

import AppHostTestKit
import AppHostTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import DBusTestSupport
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import AppHostSystemd

/// `org.freedesktop.LogControl1` on a private dbus-daemon, asked with systemd's own `busctl`, as
/// `systemctl service-log-level` asks it.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl"), "needs dbus-daemon and busctl (Debian packages dbus-daemon, systemd)"))
struct LogControlEdgeTests {
    static let name = "org.apphost.logtest"

    /// busctl on `address`, as root or, with `unprivileged`, as nobody.
    static func busctl(_ arguments: [String], address: String, unprivileged: Bool = false) throws -> (status: Int32, output: String) {
        let process = Process()
        let pipe = Pipe()
        let busctl = ["/usr/bin/busctl", "--address=\(address)"] + arguments
        if unprivileged {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups"] + busctl
        } else {
            process.executableURL = URL(fileURLWithPath: busctl[0])
            process.arguments = Array(busctl.dropFirst())
        }
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func property(_ name: String, address: String, unprivileged: Bool = false) throws -> (status: Int32, output: String) {
        try busctl(["get-property", Self.name, "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1", name], address: address, unprivileged: unprivileged)
    }

    static func set(_ name: String, _ value: String, address: String, unprivileged: Bool = false) throws -> (status: Int32, output: String) {
        try busctl(["set-property", Self.name, "/org/freedesktop/LogControl1", "org.freedesktop.LogControl1", name, "s", value], address: address, unprivileged: unprivileged)
    }

    /// Runs the service on a fresh bus open to every user until `body` ends.
    func withService(control: LogLevelControl, _ body: (String) async throws -> Void) async throws {
        let bus = try TestSessionBus.start(openToEveryUser: true)
        defer { bus.stop() }
        let logs = CapturedLogs()
        let service = LogControlEdge(busName: Self.name, identifier: "logtest", control: control, bus: .address(bus.address), logger: logs.logger())
        try await testGracefulShutdown { trigger in
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await service.run() }
                // The name appears once the service owns it; nothing to await but the bus.
                let deadline = ContinuousClock.now + .seconds(10)
                while try Self.property("LogLevel", address: bus.address).status != 0, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try await body(bus.address)
                trigger.triggerGracefulShutdown()
            }
        }
        #expect(!logs.messages.contains { $0.hasPrefix("log control unavailable") }, "\(logs.messages)")
    }

    @Test("LogLevel, LogTarget and SyslogIdentifier read as systemd spells them; a privileged write applies live")
    func readAndWrite() async throws {
        let control = LogLevelControl(level: .info)
        try await withService(control: control) { (address: String) async throws in
            #expect(try Self.property("LogLevel", address: address).output == #"s "info""#)
            #expect(try Self.property("LogTarget", address: address).output == #"s "auto""#)
            #expect(try Self.property("SyslogIdentifier", address: address).output == #"s "logtest""#)

            #expect(try Self.set("LogLevel", "debug", address: address).status == 0)
            #expect(control.level == .debug)
            #expect(try Self.property("LogLevel", address: address).output == #"s "debug""#)
            #expect(try Self.set("LogLevel", "err", address: address).status == 0)
            #expect(control.level == .error)
            #expect(try Self.set("LogLevel", "5", address: address).status == 0)
            #expect(control.level == .notice)

            #expect(try Self.set("LogTarget", "console", address: address).status == 0)
            #expect(control.target == .console)
            #expect(try Self.set("LogTarget", "auto", address: address).status == 0)
            #expect(control.target == .auto)
        }
    }

    @Test("a value systemd would not send, or one the daemon cannot honour, is refused with InvalidArgs and changes nothing")
    func badValuesAreRefused() async throws {
        let control = LogLevelControl(level: .info)
        try await withService(control: control) { (address: String) async throws in
            let level = try Self.set("LogLevel", "loud", address: address)
            #expect(level.status != 0)
            #expect(level.output.contains("Invalid LogLevel"), "\(level.output)")
            let target = try Self.set("LogTarget", "kmsg", address: address)
            #expect(target.status != 0 && target.output.contains("Invalid LogTarget"), "\(target.output)")
            #expect(try Self.set("SyslogIdentifier", "other", address: address).status != 0, "read-only")
            #expect(control.level == .info && control.target == .auto)
        }
    }

    @Test("an unprivileged caller may read but not write: the write is refused before the value is read")
    func anUnprivilegedCallerIsRefused() async throws {
        let control = LogLevelControl(level: .info)
        try await withService(control: control) { (address: String) async throws in
            #expect(try Self.property("LogLevel", address: address, unprivileged: true).output == #"s "info""#)
            let write = try Self.set("LogLevel", "debug", address: address, unprivileged: true)
            #expect(write.status != 0)
            #expect(write.output.localizedCaseInsensitiveContains("access denied") || write.output.contains("AccessDenied"), "\(write.output)")
            #expect(control.level == .info)
        }
    }

    @Test("busctl finds the object as it finds systemd's: its tree, its introspection, GetAll and Ping")
    func busctlFindsTheObject() async throws {
        let control = LogLevelControl(level: .warning)
        try await withService(control: control) { (address: String) async throws in
            let tree = try Self.busctl(["tree", "--list", Self.name], address: address)
            #expect(tree.status == 0 && tree.output.contains("/org/freedesktop/LogControl1"), "\(tree.output)")
            let introspection = try Self.busctl(["introspect", Self.name, "/org/freedesktop/LogControl1"], address: address)
            #expect(introspection.status == 0, "\(introspection.output)")
            #expect(introspection.output.contains(".LogLevel") && introspection.output.contains("writable"), "\(introspection.output)")
            #expect(introspection.output.contains(".SyslogIdentifier") && introspection.output.contains("const"), "\(introspection.output)")
            let all = try Self.busctl(["call", Self.name, "/org/freedesktop/LogControl1", "org.freedesktop.DBus.Properties", "GetAll", "s", "org.freedesktop.LogControl1"], address: address)
            #expect(all.output == #"a{sv} 3 "LogLevel" s "warning" "LogTarget" s "auto" "SyslogIdentifier" s "logtest""#, "\(all.output)")
            #expect(try Self.busctl(["call", Self.name, "/org/freedesktop/LogControl1", "org.freedesktop.DBus.Peer", "Ping"], address: address).status == 0)
            let elsewhere = try Self.busctl(["get-property", Self.name, "/elsewhere", "org.freedesktop.LogControl1", "LogLevel"], address: address)
            #expect(elsewhere.status != 0 && elsewhere.output.contains("Unknown object"), "\(elsewhere.output)")
        }
    }

    @Test("a call of 1.2 MB is taken by sd-bus without harm, and the connection serves the next one")
    func anOversizedCallIsSkipped() async throws {
        let control = LogLevelControl(level: .notice)
        try await withService(control: control) { (address: String) async throws in
            let chunk = String(repeating: "x", count: 100_000)
            let big = try Self.busctl(["call", "--expect-reply=no", Self.name, "/org/freedesktop/LogControl1", "org.freedesktop.DBus.Properties", "Get", "as", "12"] + Array(repeating: chunk, count: 12), address: address)
            #expect(big.status == 0, "\(big.output)")
            #expect(try Self.property("LogLevel", address: address).output == #"s "notice""#)
        }
    }

    /// A listening socket where a bus would be, which the test answers itself (or not at all).
    static func fakeBus() throws -> (listener: Int32, path: String) {
        let path = try makeTemporaryDirectory("apphost-fake-bus") + "/bus"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = withUnixAddress(pathBytes: Array(path.utf8)) { bind(listener, $0, $1) }
        try #require(bound == 0 && listen(listener, 4) == 0)
        return (listener, path)
    }

    /// Whether a connection to `listener` is pending within ten seconds. Waited for on a thread
    /// of its own: a poll on one of the cooperative pool's threads (two on a two-core machine)
    /// could keep the service under test from running at all, and time out.
    static func connectionPending(on listener: Int32) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var pending = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                continuation.resume(returning: poll(&pending, 1, 10_000) == 1)
            }
        }
    }

    @Test("a bus that answers the authentication with noise: one line that says the connection ended, without the raw bytes")
    func noiseFromTheBusIsNotEchoed() async throws {
        let (listener, path) = try Self.fakeBus()
        defer { close(listener) }
        let logs = CapturedLogs()
        let service = LogControlEdge(busName: Self.name, identifier: "x", control: LogLevelControl(), bus: .address("unix:path=\(path)"), logger: logs.logger())
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await service.run() }
            try #require(await Self.connectionPending(on: listener), "the service never connected")
            let peer = accept(listener, nil, nil)
            defer { close(peer) }
            var noise = [UInt8](repeating: 0, count: 300)
            for index in noise.indices { noise[index] = UInt8(truncatingIfNeeded: index &* 151 &+ 7) }
            noise.append(UInt8(ascii: "\n"))
            _ = noise.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
        }
        let lines = logs.all.filter { $0.message.hasPrefix("log control unavailable") }
        #expect(lines.count == 1, "\(logs.messages)")
        // Whether the noise ends the connection while sd_bus_start still writes (EPIPE) or after.
        #expect(lines.first.map { $0.message.contains("the bus closed the connection") || $0.message.contains("no bus at unix:path=\(path)") } == true, "\(logs.messages)")
        #expect(lines.first.map { $0.message.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F || $0 >= 0xC2 } } == true, "the noise is echoed: \(logs.messages)")
    }

    @Test("a bus that accepts the connection and never answers does not hold up a graceful shutdown, and is not reported as unavailable")
    func aMuteBusDoesNotDelayTheStop() async throws {
        let (listener, path) = try Self.fakeBus()
        defer { close(listener) }

        let logs = CapturedLogs()
        let service = LogControlEdge(busName: Self.name, identifier: "x", control: LogLevelControl(), bus: .address("unix:path=\(path)"), logger: logs.logger())
        let clock = ContinuousClock()
        var stopped: ContinuousClock.Instant?
        try await testGracefulShutdown { trigger in
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await service.run() }
                // The service's connection is pending once the listener is readable.
                try #require(await Self.connectionPending(on: listener), "the service never connected")
                stopped = clock.now
                trigger.triggerGracefulShutdown()
            }
        }
        let took = clock.now - (stopped ?? clock.now)
        #expect(took < .seconds(5), "the stop waited \(took) for a bus that never answers (the call timeout is 25 s)")
        #expect(!logs.messages.contains { $0.hasPrefix("log control unavailable") }, "\(logs.messages)")
    }

    @Test("without a bus the service says once why and ends; the daemon runs on")
    func withoutABusItSaysWhy() async throws {
        let logs = CapturedLogs()
        let service = LogControlEdge(busName: Self.name, identifier: "x", control: LogLevelControl(), bus: .address("unix:path=/nonexistent/bus"), logger: logs.logger())
        await service.run()
        let lines = logs.all.filter { $0.message.hasPrefix("log control unavailable") }
        #expect(lines.count == 1 && lines.first?.level == .notice, "\(logs.messages)")
        #expect(lines.first?.message.contains("No such file or directory") == true, "\(logs.messages)")
    }

    @Test("a bus whose policy does not let the daemon own its name: it says once that the name is not its own and that a policy must allow it")
    func aPolicyThatRefusesTheNameIsNamed() async throws {
        let bus = try TestSessionBus.start(mayOwnNames: false)
        defer { bus.stop() }
        let logs = CapturedLogs()
        let service = LogControlEdge(busName: Self.name, identifier: "x", control: LogLevelControl(), bus: .address(bus.address), logger: logs.logger())
        await service.run()
        let lines = logs.all.filter { $0.message.hasPrefix("log control unavailable") }
        #expect(lines.count == 1, "\(logs.messages)")
        #expect(lines.first?.message.contains("the name \(Self.name) is not ours") == true, "\(logs.messages)")
        #expect(lines.first?.message.contains("D-Bus policy") == true, "\(logs.messages)")
    }

    @Test("after a restart of the bus, log control comes back by itself: one line when lost, one when back, and a level set through the new bus applies")
    func reconnectsAfterTheBusRestarts() async throws {
        var bus = try TestSessionBus.start(openToEveryUser: true)
        defer { bus.stop() }
        let address = bus.socketAddress
        let control = LogLevelControl(level: .info)
        let logs = CapturedLogs()
        let service = LogControlEdge(busName: Self.name, identifier: "logtest", control: control, bus: .address(address), logger: logs.logger())
        try await testGracefulShutdown { trigger in
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await service.run() }
                #expect(await logs.first(timeout: .seconds(10)) { $0.message == "log control on the bus as \(Self.name)" } != nil, "\(logs.messages)")

                bus = try bus.restarted()
                #expect(await logs.first(timeout: .seconds(10)) { $0.message.hasPrefix("log control: lost the bus") } != nil, "\(logs.messages)")
                #expect(await logs.first(timeout: .seconds(15)) { $0.message == "log control: back on the bus as \(Self.name)" } != nil, "\(logs.messages)")
                #expect(try Self.set("LogLevel", "debug", address: address).status == 0)
                #expect(control.level == .debug)
                trigger.triggerGracefulShutdown()
            }
        }
        #expect(logs.messages.filter { $0.hasPrefix("log control: lost the bus") }.count == 1, "\(logs.messages)")
        #expect(logs.messages.filter { $0.hasPrefix("log control: back on the bus") }.count == 1, "\(logs.messages)")
        #expect(!logs.messages.contains { $0.hasPrefix("log control unavailable") }, "\(logs.messages)")
    }

    @Test("the bus name follows the daemon's name")
    func busNames() {
        #expect(LogControlEdge.busName(commandName: "apphostd") == "org.apphost.apphostd")
        #expect(LogControlEdge.busName(commandName: "heart.beat d") == "org.apphost.heart_beat_d")
        #expect(LogControlEdge.busName(commandName: "3d") == "org.apphost._3d")
    }
}

@Suite struct LogLevelControlTests {
    @Test("a reload applies host.log-level only when the file changed it: an operator's level stays otherwise")
    func theFileWinsOnlyWhenItChanged() {
        let control = LogLevelControl(level: .info)
        #expect(control.applyConfigured(.info))
        control.level = .debug  // systemctl service-log-level apphostd debug
        #expect(!control.applyConfigured(.info), "a reload of the same file")
        #expect(control.level == .debug)
        #expect(control.applyConfigured(.warning), "the file now says warning")
        #expect(control.level == .warning)
    }
}

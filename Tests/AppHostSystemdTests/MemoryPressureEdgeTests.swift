import AppHost
import AppHostTestKit
import AppHostTestSupport
import Glibc
import Logging
import ServiceLifecycle
import Testing

@testable import AppHostSystemd

/// A pressure source with nothing to watch costs the memory warnings, never the daemon: its
/// edge waits idle for the group's shutdown.
@Suite struct MemoryPressureEdgeTests {
    /// Runs until the group shuts down, as the daemon's other services do.
    struct Parked: Service {
        func run() async throws { try await gracefulShutdown() }
    }

    @Test("with nothing to watch (/dev/zero) the edge waits for the shutdown instead of ending the group", arguments: ["/dev/zero", "/dev/urandom"])
    func anEdgeWithNothingToWatchStaysUp(watch: String) async throws {
        let logs = CapturedLogs()
        var logger = logs.logger()
        logger.logLevel = .debug
        let host = try PluggableApplicationHost(services: [])
        let edge = MemoryPressureEdge(host: host, environment: ["MEMORY_PRESSURE_WATCH": watch], logger: logger)
        #expect(!edge.source.isWatching)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: edge), .init(service: Parked())], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger
        ))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let idle = await logs.first { $0.message == "memory pressure: nothing to watch; idle until the shutdown" }
            #expect(idle != nil)
            await group.triggerGracefulShutdown()
            // Ending on its own, the edge made the group throw (serviceFinishedUnexpectedly).
            try await tasks.waitForAll()
        }
    }

    @Test("a watching edge delivers a write to its FIFO, then ends at the group's shutdown, which finishes its stream")
    func aWatchingEdgeEndsAtTheShutdown() async throws {
        let directory = try makeTemporaryDirectory("apphost-pressure")
        defer { _ = rmdir(directory) }
        let fifo = directory + "/watch"
        defer { _ = unlink(fifo) }
        #expect(mkfifo(fifo, 0o600) == 0)
        let logs = CapturedLogs()
        let host = try PluggableApplicationHost(services: [])
        let edge = MemoryPressureEdge(host: host, environment: ["MEMORY_PRESSURE_WATCH": fifo], logger: logs.logger())
        #expect(edge.source.isWatching)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: host), .init(service: edge)], gracefulShutdownSignals: [], cancellationSignals: [], logger: logs.logger()
        ))
        let ended = await completes(within: .seconds(20)) {
            await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                _ = try? await host.launched()
                let writer = open(fifo, O_WRONLY | O_CLOEXEC)
                #expect(writer >= 0)
                #expect(write(writer, "x", 1) == 1)
                close(writer)
                let warned = await logs.first { $0.message == "memory pressure" }
                #expect(warned != nil)
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
            }
        }
        #expect(ended, "the edge kept the group from ending after the shutdown")
    }
}

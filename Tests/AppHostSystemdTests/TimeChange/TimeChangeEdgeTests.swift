import AppHost
import AppHostTestKit
import Logging
import ServiceContextModule
import Testing

@testable import AppHostSystemd

/// The edge turns each change into a request of the host, its journal line first.
@Suite struct TimeChangeEdgeTests {
    /// Keeps what each `applicationSignificantTimeChange` was told, and in which state.
    struct Witness: ApplicationService {
        let told = TestLog<String>()

        func applicationSignificantTimeChange(_ application: ApplicationHandle) async throws {
            told.append("\(ServiceContext.current?.significantTimeChange?.description ?? "-") in \(application.state)")
        }
    }

    @Test("a clock step reaches every service with cause clock, the line says how far it moved; with TZ set no zone is watched")
    func aStepReachesTheServices() async throws {
        let witness = Witness()
        let logs = CapturedLogs()
        let loop = try EdgeEventLoop(name: "test-time-edge")
        defer {
            loop.close()
            loop.waitUntilEnded()
        }
        try await withTestHost([ServiceDescriptor(name: "w", service: witness)]) { test in
            let clock = FakeWallClock(at: TimeChangeDetectorTests.day0 + 10 * 3600)
            let timer = FakeWallClockTimer()
            let edge = TimeChangeEdge(
                host: test.host, logger: logs.logger(), on: loop, environment: ["TZ": "UTC"], clock: clock, timer: timer, zonePath: "/nonexistent/localtime")
            #expect(edge.summary == "the clock, midnight and $TZ (the zone is the environment's, which glibc reads once: nothing to watch)")
            try await test.enterBackground()
            await withDiscardingTaskGroup { group in
                group.addTask { await edge.run() }
                // The source takes the clock's time when it is on the loop, then arms its timer.
                _ = await timer.arms.first { _ in true }
                clock.step(-90 * 60)
                timer.cancel()
                #expect(await witness.told.first { _ in true } == "clock in background")
                let line = await logs.first { $0.message == "the clock moved 1h 30m back" }
                #expect(line?.metadata["cause"] == "clock")
                group.cancelAll()
            }
        }
    }
}

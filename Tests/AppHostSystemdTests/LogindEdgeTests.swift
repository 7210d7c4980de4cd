@testable import AppHostSystemd
import AppHost
import AppHostTestKit
import AppHostTestSupport
import Logging
import DBusTestSupport
import Synchronization
import Testing

/// logind's client against a stand-in logind on a private bus (TestLogind), so that its logic
/// runs without root: the inhibitors and their release, the margin before logind's limit, polkit's
/// refusal, logind restarting, the session's screen lock. The real logind is the PID-1 suites'
/// (LogindContainerTests, SystemManagerTests+Logind).
@Suite struct LogindEdgeTests {
    /// A service whose background hook waits until the test lets it go.
    struct SlowBackground: ApplicationService {
        let gate: AsyncStream<Void>

        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            for await _ in gate { return }
        }
    }

    /// The session the lookups find: the fake's.
    static let lookup = LoginSessionLookup(display: { _ in TestLogind.sessionID }, sessions: { _ in [TestLogind.sessionID] }, activeSession: { _ in TestLogind.sessionID }, exists: { _ in true })

    /// A host with `services`, and logind's edge for it on the fake's bus, for the length of `body`.
    func withLogind(
        delayMax: Duration = .seconds(5), refusing: Bool = false, services: [ServiceDescriptor] = [ServiceDescriptor(name: "idle", service: IdleService())],
        session: LogindEdge.WatchedSession? = nil,
        _ body: (TestLogind, PluggableApplicationHost, CapturedLogs) async throws -> Void
    ) async throws {
        let bus = try TestSessionBus.start()
        defer { bus.stop() }
        let logind = try await TestLogind.start(address: bus.address, delayMax: delayMax, refusingInhibitors: refusing)
        let logs = CapturedLogs()
        let host = try PluggableApplicationHost(services: services, logger: logs.logger())
        let edge = LogindEdge(host: host, who: "logind-test", logger: logs.logger(), on: nil, session: session, bus: .address(bus.address), sessionLookup: Self.lookup)
        try await host.withRunning {
            try await host.launched()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await edge.run() }
                try await body(logind, host, logs)
                group.cancelAll()
            }
        }
        await logind.stop()
    }

    @Test("a delay inhibitor for sleep and one for shutdown, released once the services are in the background, taken again after the resume")
    func inhibitorsAreReleasedWhenTheServicesAreReady() async throws {
        try await withLogind { logind, host, logs in
            #expect(await logind.inhibitors.first { $0.what == "shutdown" } != nil)
            #expect(await logind.inhibitors.first { $0.what == "sleep" } == .init(what: "sleep", who: "logind-test", mode: "delay"))
            logind.prepareForSleep(true)
            #expect(await logind.releases.first { $0.what == "sleep" } != nil)
            #expect(host.status.state == .background)
            logind.prepareForSleep(false)
            #expect(await logind.inhibitors.first(where: { _ in logind.inhibitors.all.filter { $0.what == "sleep" }.count == 2 }) != nil, "taken again")
            #expect(await logs.first { $0.message.contains("the machine is awake again") } != nil)
            #expect(logind.releases.all.filter { $0.what == "shutdown" }.isEmpty)
        }
    }

    @Test("a hook still running at the deadline: the inhibitor goes a margin before logind's limit, and the log names the service inside its hook")
    func theDeadlineReleasesBeforeLogindsLimit() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        defer { open.finish() }
        let delayMax = Duration.seconds(2)
        try await withLogind(delayMax: delayMax, services: [ServiceDescriptor(name: "slow", service: SlowBackground(gate: gate))]) { logind, _, logs in
            _ = await logind.inhibitors.first { $0.what == "sleep" }
            _ = await logs.first { $0.message.contains("following logind") }
            let asked = ContinuousClock.now
            logind.prepareForSleep(true)
            let release = await logind.releases.first { $0.what == "sleep" }
            let waited = try #require(release).at - asked
            // The margin: a quarter of the limit, at most 500 ms (1.5 s here), not at once.
            #expect(waited < delayMax, "released \(waited) after the signal: logind's limit is \(delayMax)")
            #expect(waited >= .seconds(1), "released \(waited) after the signal, while the hook still ran")
            let warning = await logs.first { $0.message.contains("released the sleep inhibitor") }
            #expect(warning?.message.contains("slow is still inside applicationDidEnterBackground") == true, "\(String(describing: warning))")
            open.finish()
        }
    }

    @Test("polkit refuses both inhibitors: one warning that says what to install, and the daemon runs on")
    func polkitsRefusalIsSaidOnce() async throws {
        try await withLogind(refusing: true) { _, host, logs in
            let warning = await logs.first { $0.message.contains("logind refused the delay inhibitors") }
            #expect(warning?.message.contains("AccessDenied") == true)
            #expect(warning?.message.contains("apt-get install polkitd") == true)
            try await host.enterBackground()
            #expect(logs.all.filter { $0.message.contains("refused") }.count == 1, "\(logs.all.map(\.message))")
        }
    }

    @Test("logind restarts: the client asks it again and its next PrepareForSleep is answered, the inhibitor logind kept released")
    func logindRestarting() async throws {
        try await withLogind { logind, host, logs in
            _ = await logind.inhibitors.first { $0.what == "sleep" }
            #expect(await logind.delayMaxQueries.first { $0 == 1 } != nil)
            await logind.restart()
            #expect(await logind.delayMaxQueries.first { $0 == 2 } != nil, "asked the new logind")
            logind.prepareForSleep(true)
            #expect(await logind.releases.first { $0.what == "sleep" } != nil)
            #expect(host.status.state == .background)
            #expect(!logs.all.contains { $0.level >= .warning }, "\(logs.all.filter { $0.level >= .warning }.map(\.message))")
        }
    }

    @Test("the session the lookup finds: its screen lock from the session's Lock, LockedHint and Unlock")
    func theSessionsScreenLock() async throws {
        try await withLogind(session: .user("root")) { logind, _, logs in
            #expect(await logs.first { $0.message.contains("following the screen lock of logind session c1") } != nil)
            logind.setScreenLocked(true)
            #expect(await logs.first { $0.message.contains("the screen of logind session c1 is locked") } != nil)
            logind.setScreenLocked(false)
            #expect(await logs.first { $0.message.contains("the screen of logind session c1 is unlocked") } != nil)
        }
    }
}

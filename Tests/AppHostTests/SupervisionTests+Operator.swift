import AppHost
import AppHostTestKit
import Synchronization
import Testing

extension SupervisionTests {
    @Test("an operator's restart: the whole service, in its place, counted and announced")
    func anOperatorRestartsAService() async throws {
        let built = Mutex(0)
        let cache = ServiceDescriptor(name: "cache", type: "cache") {
            built.withLock { $0 += 1 }
            return Idle()
        }
        try await withTestHost([ServiceDescriptor(name: "a", service: Idle()), cache, ServiceDescriptor(name: "b", service: Idle())]) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            try await host.host.restartService(named: "cache")
            #expect(restarts.all == [ServiceDidRestart(service: "cache", restarts: 1, scope: .instance, error: nil)])
            #expect(built.withLock { $0 } == 2)
            #expect(Array(host.events(of: "cache").suffix(4)) == [.willTerminate, .willFinishLaunching, .didFinishLaunching, .didBecomeActive])
            #expect(host.status.services.map(\.name) == ["a", "cache", "b"])
            #expect(host.status.services[1].restarts == 1)
            #expect(host.events(of: "a").last == .didBecomeActive, "the others untouched")
        }
    }

    @Test("an operator's restart brings back a service whose restarts gave way: an optional one stopped, a required one that made the host unhealthy")
    func anOperatorRestartClearsAFailure() async throws {
        let optional = FlakyRunLoop(failures: 2)
        let required = FlakyRunLoop(failures: 2)
        let services = [
            Self.descriptor("optional", optional, required: false, restart: Self.policy(.transient, delay: .milliseconds(1), intensity: 1)),
            Self.descriptor("required", required, restart: Self.policy(.transient, delay: .milliseconds(1), intensity: 1)),
        ]
        try await withTestHost(services) { host in
            try await host.launched()
            _ = try await host.waitForCall(.willTerminate, of: "optional")
            _ = await host.logs.first { $0.message == "unhealthy: required failed 2 times in 60s" }
            try await host.host.restartService(named: "optional")
            try await host.host.restartService(named: "required")
            // Each FlakyRunLoop failed twice; its third run (the restart's) goes on.
            #expect(optional.starts.count == 3 && required.starts.count == 3)
            #expect(host.status.services.map(\.isEnabled) == [true, true])
            #expect(host.status.services.map(\.failure) == [nil, nil])
            #expect(host.status.healthProblem == nil)
            #expect(await host.logs.first { $0.message.hasPrefix("healthy again") } != nil)
        }
    }

    @Test("what an operator's restart refuses: a name the host does not have, and a new instance that fails to launch")
    func anOperatorRestartThatFails() async throws {
        struct Refusing: Error {}
        let attempts = Mutex(0)
        let db = ServiceDescriptor(name: "db", type: "db", isRequired: false) {
            try attempts.withLock { count in
                count += 1
                if count > 1 { throw Refusing() }
            }
            return Idle()
        }
        try await withTestHost([db]) { host in
            try await host.launched()
            let unknown = await #expect(throws: ServiceRestartError.self) { try await host.host.restartService(named: "dbx") }
            #expect(unknown?.code == .noSuchService)
            #expect(unknown?.description == "dbx: no such service: the services are db")
            let failed = await #expect(throws: ServiceRestartError.self) { try await host.host.restartService(named: "db") }
            #expect(failed?.code == .failedToLaunch)
            #expect(failed?.reason.contains("Refusing") == true, "\(String(describing: failed))")
            #expect(host.status.services[0].isEnabled == false)
            #expect(host.events(of: "db").last == .willTerminate)
        }
    }

    @Test("an operator's restart after the host's run is refused with supervision's own reason, not a reload's")
    func anOperatorRestartAfterTheRun() async throws {
        try await withTestHost([ServiceDescriptor(name: "db", service: Idle())]) { host in
            try await host.launched()
            await host.host.terminate(reason: "done")
            let refused = await #expect(throws: ServiceRestartError.self) { try await host.host.restartService(named: "db") }
            #expect(refused?.code == .notRunning)
            #expect(refused?.reason == "only a running host restarts or stops its services; it is notRunning")
        }
    }

    /// Records each launch's `launchesIntoBackground`.
    final class LaunchesSeen: Sendable {
        let values = Mutex<[Bool]>([])
    }

    struct LaunchRecorder: ApplicationService {
        let seen: LaunchesSeen
        func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            seen.values.withLock { $0.append(options.launchesIntoBackground) }
            return true
        }
    }

    @Test("a restart in the background launches the new instance into the background: its options say so, and didEnterBackground alone follows its launch")
    func aRestartInTheBackgroundLaunchesIntoIt() async throws {
        let seen = LaunchesSeen()
        let counter = ServiceDescriptor(name: "counter", type: "counter") { LaunchRecorder(seen: seen) }
        try await withTestHost([counter]) { host in
            try await host.launched()
            try await host.enterBackground()
            try await host.host.restartService(named: "counter")
            #expect(seen.values.withLock { $0 } == [false, true])
            // No willResignActive: a service that counts entries into the background counts them there.
            #expect(Array(host.events(of: "counter").suffix(4)) == [.willTerminate, .willFinishLaunching, .didFinishLaunching, .didEnterBackground])
            try await host.enterForeground()
            try await host.host.restartService(named: "counter")
            #expect(seen.values.withLock { $0 } == [false, true, false])
        }
    }
}

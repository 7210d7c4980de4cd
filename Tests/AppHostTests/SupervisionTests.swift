import AppHost
import AppHostTestKit
import Synchronization
import Testing

/// A service whose run loop ends on its own: it throws (or returns) on each of its first
/// `failures` starts, then runs until the host stops it. Every start is logged with its instant.
final class FlakyRunLoop: ApplicationService, Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "lost the connection" }
    }

    let failures: Int
    let throwing: Bool
    let starts = TestLog<ContinuousClock.Instant>()

    init(failures: Int = .max, throwing: Bool = true) {
        self.failures = failures
        self.throwing = throwing
    }

    func run(_ application: ApplicationHandle) async throws {
        starts.append(.now)
        guard starts.count > failures else {
            if throwing { throw Failure() }
            return
        }
        let (stopped, keeper) = AsyncStream<Never>.makeStream()
        for await _ in stopped {}
        keeper.finish()
    }
}

/// A service with no hook of its own.
struct Idle: ApplicationService {}

/// Supervision: a run loop that ends on its own is restarted by its policy, with a delay that
/// grows, and escalates past its intensity.
@Suite struct SupervisionTests {
    static func policy(_ mode: RestartPolicy.Mode, delay: Duration = .milliseconds(20), intensity: Int = 5, scope: RestartPolicy.Scope = .runLoop) -> RestartPolicy {
        RestartPolicy(mode: mode, scope: scope, delay: delay, maximumDelay: .seconds(30), intensity: intensity, period: .seconds(60))
    }

    static func descriptor(_ name: String, _ service: some ApplicationService, required: Bool = true, restart: RestartPolicy) -> ServiceDescriptor {
        var descriptor = ServiceDescriptor(name: name, isRequired: required, service: service)
        descriptor.restart = restart
        return descriptor
    }

    @Test("a run loop that throws is restarted after the delay, counted, and the delays grow")
    func restartsWithGrowingDelays() async throws {
        let flaky = FlakyRunLoop(failures: 3)
        try await withTestHost([Self.descriptor("outbox", flaky, restart: Self.policy(.transient))]) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            let third = await restarts.first { $0.restarts == 3 }
            #expect(third == ServiceDidRestart(service: "outbox", restarts: 3, scope: .runLoop, error: "lost the connection"))
            #expect(restarts.count == 3)
            let starts = flaky.starts.all
            try #require(starts.count == 4)
            // 20 ms, 40 ms, 80 ms (each plus up to a tenth): lower bounds only, never flaky.
            let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
            #expect(gaps[0] >= .milliseconds(20))
            #expect(gaps[1] >= .milliseconds(40))
            #expect(gaps[2] >= .milliseconds(80))
            let lines = host.logs.messages.filter { $0.hasPrefix("outbox restarting in") }
            #expect(lines.count == 3)
            #expect(lines.first?.hasSuffix("(1/5 in 60s)") == true, "\(lines)")
            // The restart's request ends after its message: the next request sees its status.
            _ = try await host.receiveMemoryWarning()
            let service = host.status.services[0]
            #expect(service.restarts == 3)
            #expect(service.pendingRestart == nil)
            #expect(service.lastError == "lost the connection")
            #expect(host.status.healthProblem == nil)
        }
    }

    @Test("while a restart waits, the status says so: outbox restarting (1/5 in 60s)")
    func theStatusShowsAWaitingRestart() async throws {
        let flaky = FlakyRunLoop(failures: 1)
        try await withTestHost([Self.descriptor("outbox", flaky, restart: Self.policy(.transient, delay: .seconds(30)))]) { host in
            try await host.launched()
            // The ready report's status, or one after it, depending on when the loop took the end.
            @Sendable func waitingStatus(_ report: HostReport) -> HostStatus? {
                switch report {
                case .status(let status), .ready(let status): status.services.first?.pendingRestart != nil ? status : nil
                default: nil
                }
            }
            let waiting = await host.reports.first { waitingStatus($0) != nil }
            let status = try #require(waiting.flatMap(waitingStatus))
            #expect(status.description.contains("outbox restarting (1/5 in 60s)"), "\(status)")
            #expect(flaky.starts.count == 1)
        }
    }

    @Test("temporary, the default, never restarts; transient does not restart a run loop that returned; permanent does")
    func modes() async throws {
        let temporary = FlakyRunLoop(failures: 1)
        let returned = FlakyRunLoop(failures: 1, throwing: false)
        let permanent = FlakyRunLoop(failures: 1, throwing: false)
        let services = [
            ServiceDescriptor(name: "temporary", service: temporary),
            Self.descriptor("transient", returned, restart: Self.policy(.transient)),
            Self.descriptor("permanent", permanent, restart: Self.policy(.permanent)),
        ]
        try await withTestHost(services) { host in
            let restarts = host.messages(of: ServiceDidRestart.self)
            try await host.launched()
            #expect(await restarts.first { $0.service == "permanent" } == ServiceDidRestart(service: "permanent", restarts: 1, scope: .runLoop, error: nil))
            #expect(await host.logs.first { $0.message == "run loop ended with an error: lost the connection" } != nil)
            #expect(await host.logs.first { $0.message == "run loop returned" && $0.metadata["service"] == "transient" } != nil)
            // A barrier: the loop has handled every end by the time a request it queued after them is done.
            _ = try await host.receiveMemoryWarning()
            #expect(restarts.all.map(\.service) == ["permanent"])
            #expect(temporary.starts.count == 1)
            #expect(returned.starts.count == 1)
            #expect(host.status.services.map(\.restarts) == [0, 0, 1])
        }
    }

    @Test("an optional service past its intensity is stopped with willTerminate and disabled; the rest run on")
    func anOptionalServiceIsStopped() async throws {
        let flaky = FlakyRunLoop()
        let services = [
            Self.descriptor("outbox", flaky, required: false, restart: Self.policy(.transient, delay: .milliseconds(1), intensity: 2)),
            ServiceDescriptor(name: "other", service: Idle()),
        ]
        try await withTestHost(services) { host in
            try await host.launched()
            _ = try await host.waitForCall(.willTerminate, of: "outbox")
            _ = try await host.receiveMemoryWarning()
            #expect(flaky.starts.count == 3)
            let outbox = host.status.services[0]
            #expect(outbox.condition == .disabled(reason: "failed 3 times in 60s"))
            #expect(outbox.failure == "failed 3 times in 60s")
            #expect(host.status.healthProblem == nil)
            #expect(await host.logs.first { $0.message == "outbox failed 3 times in 60s: not restarted again; an optional service, so it is stopped" } != nil)
            #expect(try await host.enterBackground())
            #expect(host.events(of: "outbox").last == .willTerminate)
            #expect(host.events(of: "other").last == .didEnterBackground)
        }
    }

    @Test("a required service past its intensity makes the host unhealthy, named with the count and the window")
    func aRequiredServiceMakesTheHostUnhealthy() async throws {
        let flaky = FlakyRunLoop()
        try await withTestHost([Self.descriptor("outbox", flaky, restart: Self.policy(.permanent, delay: .milliseconds(1), intensity: 1))]) { host in
            try await host.launched()
            let unhealthy = await host.logs.first { $0.message.hasPrefix("unhealthy:") }
            #expect(unhealthy?.message == "unhealthy: outbox failed 2 times in 60s")
            #expect(host.status.healthProblem == "outbox failed 2 times in 60s")
            #expect(flaky.starts.count == 2)
            // Still told about the lifecycle: systemd's watchdog, not the host, restarts it.
            #expect(try await host.enterBackground())
            #expect(host.events(of: "outbox").last == .didEnterBackground)
        }
    }

    @Test("a required service that is disabled counts as unhealthy: a reload restarted it and its new instance refused to launch")
    func aDisabledRequiredServiceIsUnhealthy() async throws {
        struct Refusing: ApplicationService {
            func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool { false }
        }
        let running = ServiceDescriptor(name: "db", type: "db", configuration: ServiceSection(["url": "a"])) { Idle() }
        let refusing = ServiceDescriptor(name: "db", type: "db", configuration: ServiceSection(["url": "b"])) { Refusing() }
        try await withTestHost([running]) { host in
            try await host.launched()
            #expect(host.status.healthProblem == nil)
            #expect(try await host.reload([refusing]).restarted == ["db"])
            let problem = try #require(host.status.healthProblem)
            #expect(problem.hasPrefix("db is disabled: "), "\(problem)")
        }
    }

    @Test("terminate wins: a restart that waits does not happen once terminate came")
    func terminateWins() async throws {
        let flaky = FlakyRunLoop()
        try await withTestHost([Self.descriptor("outbox", flaky, restart: Self.policy(.transient, delay: .seconds(30)))]) { host in
            try await host.launched()
            _ = await host.logs.first { $0.message.hasPrefix("outbox restarting in") }
            let start = ContinuousClock.now
            await host.terminate()
            #expect(ContinuousClock.now - start < .seconds(20), "terminate did not wait for the restart's delay")
            #expect(flaky.starts.count == 1)
            #expect(host.events(of: "outbox").last == .willTerminate)
        }
    }
}

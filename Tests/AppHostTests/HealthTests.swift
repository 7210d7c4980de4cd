import AppHost
import AppHostTestKit
import Synchronization
import Testing

/// A service that stays inside `applicationDidEnterBackground` until released.
final class Stuck: ApplicationService, Sendable {
    private let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let released = Mutex(false)

    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        await withCheckedContinuation { continuation in
            let resumeNow = released.withLock { released in
                if released { return true }
                release.withLock { $0 = continuation }
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func releaseHook() {
        released.withLock { $0 = true }
        release.withLock { $0.take() }?.resume()
    }
}

/// A service that reports its own health from its hooks.
struct SelfReporting: ApplicationService {
    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        application.reportUnhealthy("no connection to the database\nsecond line")
    }

    func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
        application.reportHealthy()
    }
}

/// The host's health: what the watchdog pings only while it holds.
@Suite struct HealthTests {
    static let configuration = PluggableApplicationHost.Configuration(
        hookDeadline: .milliseconds(50), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), stallLimit: .seconds(1)
    )

    @Test("a required service stuck in one hook past the stall limit makes the host unhealthy, named in its status, until the hook returns")
    func aStuckRequiredServiceIsAHealthProblem() async throws {
        let stuck = Stuck()
        try await withTestHost([ServiceDescriptor(name: "stuck", service: stuck)], configuration: Self.configuration) { host in
            try await host.launched()
            try await host.enterBackground()
            #expect(host.status.healthProblem == nil, "overran its deadline, but not yet its stall limit")
            let unhealthy = await host.logs.first { $0.message.hasPrefix("unhealthy:") }
            #expect(unhealthy?.message == "unhealthy: stuck stuck in applicationDidEnterBackground for more than 1s")
            #expect(unhealthy?.level == .error)
            // The line is logged inside the loop's turn that publishes the status at its end.
            await host.host.onLoop {}
            #expect(host.status.healthProblem == "stuck stuck in applicationDidEnterBackground for more than 1s")
            #expect(host.status.description.hasSuffix("unhealthy: stuck stuck in applicationDidEnterBackground for more than 1s"), "\(host.status)")
            stuck.releaseHook()
            let recovered = await host.logs.first { $0.message.hasPrefix("healthy again") }
            #expect(recovered != nil)
            await host.host.onLoop {}
            #expect(host.status.healthProblem == nil)
        }
    }

    @Test("an optional service stuck as long is reported as an overrun, never a health problem")
    func aStuckOptionalServiceIsNot() async throws {
        let optional = Stuck()
        let required = Stuck()
        // The optional one comes first and is stuck as long: the problem names the required one.
        let services = [
            ServiceDescriptor(name: "optional", isRequired: false, service: optional),
            ServiceDescriptor(name: "required", service: required),
        ]
        try await withTestHost(services, configuration: Self.configuration) { host in
            try await host.launched()
            try await host.enterBackground()
            let unhealthy = await host.logs.first { $0.message.hasPrefix("unhealthy:") }
            #expect(unhealthy?.message == "unhealthy: required stuck in applicationDidEnterBackground for more than 1s")
            #expect(host.status.lastOverrun != nil)
            required.releaseHook()
            _ = await host.logs.first { $0.message.hasPrefix("healthy again") }
            await host.host.onLoop {}
            #expect(host.status.healthProblem == nil, "the optional one still hangs, and counts for nothing")
            optional.releaseHook()
        }
    }

    @Test("a service says it is unhealthy through its handle, and healthy again")
    func aServiceReportsItsOwnHealth() async throws {
        try await withTestHost([ServiceDescriptor(name: "db", service: SelfReporting())], configuration: Self.configuration) { host in
            try await host.launched()
            try await host.enterBackground()
            _ = await host.logs.first { $0.message.hasPrefix("unhealthy:") }
            #expect(host.status.healthProblem == "db reports: no connection to the database\nsecond line")
            #expect(host.status.description.contains("unhealthy: db reports: no connection to the database"))
            try await host.enterForeground()
            _ = await host.logs.first { $0.message.hasPrefix("healthy again") }
            #expect(host.status.healthProblem == nil)
        }
    }

    @Test func theStallLimitIsNeverShorterThanTheHookDeadline() async throws {
        let stuck = Stuck()
        let configuration = PluggableApplicationHost.Configuration(
            hookDeadline: .milliseconds(50), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), stallLimit: .milliseconds(1)
        )
        try await withTestHost([ServiceDescriptor(name: "stuck", service: stuck)], configuration: configuration) { host in
            try await host.launched()
            try await host.enterBackground()
            let unhealthy = await host.logs.first { $0.message.hasPrefix("unhealthy:") }
            #expect(unhealthy?.message == "unhealthy: stuck stuck in applicationDidEnterBackground for more than 50ms")
            stuck.releaseHook()
            _ = await host.logs.first { $0.message.hasPrefix("healthy again") }
        }
    }
}

@testable import AppHost
import AppHostTestSupport
import Synchronization
import AppHostTestKit
import Testing

@Suite struct LaunchFlowTests {
    /// The original pluggable-AppDelegate fan-out: `&&` short-circuits, so after the first
    /// `false` the later services are never asked.
    @Test func classicReduceSkipsLaterServices() {
        let asked = Mutex<[String]>([])
        let services: [(name: String, answer: Bool)] = [("a", true), ("b", false), ("c", true)]
        let launched = services.reduce(true) { result, service in
            result && {
                asked.withLock { $0.append(service.name) }
                return service.answer
            }()
        }
        #expect(launched == false)
        #expect(asked.withLock { $0 } == ["a", "b"], "c was never asked: the classic bug")
    }

    /// Notes the task each launch hook runs in.
    final class TaskNoting: ApplicationService {
        let tasks = Mutex<[Int]>([])
        func note() { tasks.withLock { $0.append(withUnsafeCurrentTask { $0?.hashValue ?? 0 }) } }
        func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            note()
            return true
        }
        func application(_ application: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
            note()
            return true
        }
    }

    @Test("a service's two launch hooks run one after the other in one task of the host, not one task each")
    func launchHooksShareOneRun() async throws {
        let service = TaskNoting()
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "a", service: service)], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            let tasks = service.tasks.withLock { $0 }
            #expect(tasks.count == 2)
            #expect(Set(tasks).count == 1, "willFinishLaunching and didFinishLaunching ran in different tasks")
        }
    }

    @Test func hostAsksEveryOptionalServiceAfterARefusal() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal), required: false),
                descriptor(Recorder(name: "b", journal: journal, willFinish: .refuse), required: false),
                descriptor(Recorder(name: "c", journal: journal), required: false),
                descriptor(Recorder(name: "d", journal: journal, didFinish: .fail), required: false),
                descriptor(Recorder(name: "e", journal: journal), required: false),
            ],
            logger: quietLogger
        )
        try await host.withRunning {
            try await host.launched()
            #expect(journal.services(for: "willFinishLaunching") == ["a", "b", "c", "d", "e"])
            #expect(journal.services(for: "didFinishLaunching") == ["a", "c", "d", "e"])
            #expect(journal.services(for: "didBecomeActive") == ["a", "c", "e"])

            let status = host.status
            #expect(status.services.filter(\.isEnabled).map(\.name) == ["a", "c", "e"])
            #expect(status.description.hasPrefix("active · 3 services · disabled: b, d"))
            guard case .disabled(let reason) = status.services[1].condition else {
                Issue.record("b should be disabled")
                return
            }
            #expect(reason.contains("applicationWillFinishLaunching"))

            _ = journal.drain()
            try await host.enterBackground()
            try await host.enterForeground()
            try await host.receiveMemoryWarning(level: .warning)
            await host.terminate()
            let later = journal.drain()
            #expect(!later.contains { $0.hasPrefix("b:") || $0.hasPrefix("d:") })
            #expect(journal.services(for: "willTerminate") == ["e", "c", "a"])
        }
    }

    @Test func requiredServiceThatThrowsRollsBack() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "b", journal: journal), required: false),
                descriptor(Recorder(name: "c", journal: journal, didFinish: .fail)),
                descriptor(Recorder(name: "d", journal: journal)),
            ],
            logger: quietLogger
        )
        try await host.withRunning {
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure?.service == "c")
            #expect(failure?.hook == "applicationDidFinishLaunching")
            #expect(failure?.reason == .threw("c broke in didFinishLaunching"))
            #expect(failure?.description == "c failed applicationDidFinishLaunching: c broke in didFinishLaunching")
            #expect(journal.entries == [
                "a:willFinishLaunching", "a:didFinishLaunching",
                "b:willFinishLaunching", "b:didFinishLaunching",
                "c:willFinishLaunching", "c:didFinishLaunching",
                "b:willTerminate", "a:willTerminate",
            ])
            #expect(host.state == .notRunning)
            #expect(host.status.description.contains("launch failed: c failed applicationDidFinishLaunching"))
        }
    }

    @Test func requiredServiceThatRefusesRollsBack() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "b", journal: journal, willFinish: .refuse)),
                descriptor(Recorder(name: "c", journal: journal)),
            ],
            logger: quietLogger
        )
        try await host.withRunning {
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure == LaunchFailure(service: "b", hook: "applicationWillFinishLaunching", reason: .refused))
            #expect(failure?.errnoValue == 125)
            #expect(journal.entries == ["a:willFinishLaunching", "a:didFinishLaunching", "b:willFinishLaunching", "a:willTerminate"])
            #expect(journal.services(for: "willFinishLaunching").contains("c") == false)
            #expect(host.state == .notRunning)
        }
    }

    @Test func requiredServiceThatOverrunsFailsLaunch() async throws {
        let journal = Journal()
        let latch = Latch()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "stuck", journal: journal, hangs: ["willFinishLaunching": latch]), launchDeadline: .milliseconds(100)),
                descriptor(Recorder(name: "c", journal: journal)),
            ],
            logger: quietLogger
        )
        let clock = ContinuousClock()
        let start = clock.now
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            // The stuck hook never returns on its own: any bound shows the launch did not wait for it.
            // A generous one, so a loaded machine (2.3 s once, beside the rest of the suite) passes.
            #expect(clock.now - start < .seconds(10))
            #expect(failure == LaunchFailure(service: "stuck", hook: "applicationWillFinishLaunching", reason: .overran(.milliseconds(100))))
            #expect(journal.entries == ["a:willFinishLaunching", "a:didFinishLaunching", "stuck:willFinishLaunching", "a:willTerminate"])
            #expect(host.state == .notRunning)
        }
    }

    @Test func terminateDuringLaunchStopsWaitingAndRollsBack() async throws {
        let journal = Journal()
        let latch = Latch()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "slow", journal: journal, hangs: ["willFinishLaunching": latch]), required: false, launchDeadline: .seconds(30)),
                descriptor(Recorder(name: "c", journal: journal)),
            ],
            // The held hook never returns within it: its service's willTerminate is not made.
            configuration: .init(terminateDeadline: .milliseconds(300)),
            logger: quietLogger
        )
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            // Waits for the launch beside the test, which terminates it mid-launch.
            async let launch = launchFailure(of: host)
            #expect(await journal.wait(for: "slow:willFinishLaunching"))
            let clock = ContinuousClock()
            let start = clock.now
            let terminated = await completes(within: .seconds(10)) { await host.terminate() }
            #expect(terminated, "terminate waited for the launch hook in progress")
            #expect(clock.now - start < .seconds(10))
            #expect(await launch == LaunchFailure(service: "slow", hook: "applicationWillFinishLaunching", reason: .terminated))
            #expect(journal.entries == ["a:willFinishLaunching", "a:didFinishLaunching", "slow:willFinishLaunching", "a:willTerminate"])
            #expect(host.state == .notRunning)
        }
    }

    @Test func terminateBetweenLaunchStepsLaunchesNoFurtherService() async throws {
        let journal = Journal()
        let latch = Latch()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal, hangs: ["didFinishLaunching": latch])),
                descriptor(Recorder(name: "b", journal: journal)),
            ],
            configuration: .init(launchDeadline: .seconds(30), terminateDeadline: .milliseconds(300)),
            logger: quietLogger
        )
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            // Waits for the launch beside the test, which terminates it mid-launch.
            async let launch = launchFailure(of: host)
            #expect(await journal.wait(for: "a:didFinishLaunching"))
            #expect(await completes(within: .seconds(10)) { await host.terminate() })
            #expect(await launch?.reason == .terminated)
            #expect(!journal.entries.contains { $0.hasPrefix("b:") }, "\(journal.entries)")
            #expect(host.state == .notRunning)
        }
    }

    @Test("a launch hook a terminate stopped waiting for: its service gets willTerminate once the hook returns within the terminate deadline, before those launched earlier")
    func terminateCutsALaunchHookShortAndStillTerminatesItsService() async throws {
        let journal = Journal()
        let latch = Latch()
        let logs = CapturedLogs()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                descriptor(Recorder(name: "slow", journal: journal, hangs: ["willFinishLaunching": latch])),
            ],
            configuration: .init(launchDeadline: .seconds(30), terminateDeadline: .seconds(10)),
            logger: logs.logger()
        )
        try await host.withRunning {
            defer { latch.open() }
            async let launch = launchFailure(of: host)
            #expect(await journal.wait(for: "slow:willFinishLaunching"))
            async let terminated: Void = host.terminate()
            // The terminate was taken (the launch stops waiting for the hook), then the hook returns.
            #expect(await logs.first { $0.message.hasPrefix("terminating") } != nil)
            latch.open()
            await terminated
            #expect(await launch?.reason == .terminated)
            #expect(journal.services(for: "willTerminate") == ["slow", "a"], "\(journal.entries)")
            #expect(host.state == .notRunning)
        }
    }

    @Test("a service a reload adds, its launch hook cut short by a terminate: it gets willTerminate too")
    func terminateDuringAReloadStillTerminatesTheAddedService() async throws {
        let journal = Journal()
        let latch = Latch()
        let logs = CapturedLogs()
        let host = try PluggableApplicationHost(
            services: [descriptor(Recorder(name: "a", journal: journal))],
            configuration: .init(launchDeadline: .seconds(30), terminateDeadline: .seconds(10)),
            logger: logs.logger()
        )
        try await host.withRunning {
            defer { latch.open() }
            try await host.launched()
            let added = [descriptor(Recorder(name: "a", journal: journal)), descriptor(Recorder(name: "slow", journal: journal, hangs: ["willFinishLaunching": latch]))]
            async let reload = try? host.reload(added)
            #expect(await journal.wait(for: "slow:willFinishLaunching"))
            async let terminated: Void = host.terminate()
            #expect(await logs.first { $0.message.hasPrefix("terminating") } != nil)
            latch.open()
            await terminated
            _ = await reload
            #expect(journal.services(for: "willTerminate") == ["slow", "a"], "\(journal.entries)")
        }
    }

    @Test func factoryThatThrowsFailsARequiredLaunch() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "a", journal: journal)),
                ServiceDescriptor(name: "broken") { throw TestError(description: "no such file") },
            ],
            logger: quietLogger
        )
        try await host.withRunning {
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure?.service == "broken")
            #expect(failure?.reason == .invalidConfiguration("no such file"))
            #expect(journal.entries == ["a:willFinishLaunching", "a:didFinishLaunching", "a:willTerminate"])
        }
    }
}

/// How the launch of the running `host` failed, once it ended; nil when it succeeded.
func launchFailure(of host: PluggableApplicationHost) async -> LaunchFailure? {
    do throws(LaunchFailure) {
        _ = try await host.launched()
        return nil
    } catch {
        return error
    }
}

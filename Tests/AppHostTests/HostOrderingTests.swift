@testable import AppHost
import AppHostTestSupport
import Synchronization
import Testing

@Suite struct HostOrderingTests {
    let names = ["a", "b", "c"]

    @Test func eventsGoUpInOrderAndDownInReverse() async throws {
        let journal = Journal()
        let trims = Mutex(0)
        var configuration = PluggableApplicationHost.Configuration(hookDeadline: .seconds(2), launchDeadline: .seconds(2), terminateDeadline: .seconds(2))
        configuration.trimHeap = { level in
            trims.withLock { $0 += 1 }
            journal.record("host:trimHeap.\(level.rawValue)")
        }
        let host = try makeHost(names, journal: journal, configuration: configuration)
        let up = names, down = Array(names.reversed())

        try await host.withRunning {
            try await host.launched()
            #expect(journal.drain() == ["a:willFinishLaunching", "a:didFinishLaunching", "b:willFinishLaunching", "b:didFinishLaunching",
                                        "c:willFinishLaunching", "c:didFinishLaunching"] + events(up, "didBecomeActive"))
            #expect(host.state == .active)

            #expect(try await host.enterBackground())
            #expect(journal.drain() == events(down, "willResignActive") + events(down, "didEnterBackground"))
            #expect(host.state == .background)

            #expect(try await host.enterForeground())
            #expect(journal.drain() == events(up, "willEnterForeground") + events(up, "didBecomeActive"))
            #expect(host.state == .active)

            try await host.receiveMemoryWarning(level: .critical)
            #expect(journal.drain() == events(up, "didReceiveMemoryWarning.critical") + ["host:trimHeap.critical"])
            #expect(trims.withLock { $0 } == 1)

            #expect(try await host.setSessionLocked(true))
            #expect(journal.drain() == events(down, "protectedDataWillBecomeUnavailable"))
            #expect(try await host.setSessionLocked(true) == false)
            #expect(try await host.setSessionLocked(false))
            #expect(journal.drain() == events(up, "protectedDataDidBecomeAvailable"))

            await host.terminate()
            #expect(journal.drain() == events(down, "willTerminate"))
            #expect(host.state == .notRunning)
            await host.terminate()
            #expect(journal.drain().isEmpty)
        }
    }

    @Test func toggleAlternates() async throws {
        let journal = Journal()
        let host = try makeHost(["a", "b"], journal: journal)
        try await host.withRunning {
            try await host.launched()
            _ = journal.drain()
            #expect(try await host.toggleBackground() == .background)
            #expect(journal.drain() == ["b:willResignActive", "a:willResignActive", "b:didEnterBackground", "a:didEnterBackground"])
            #expect(try await host.toggleBackground() == .active)
            #expect(journal.drain() == ["a:willEnterForeground", "b:willEnterForeground", "a:didBecomeActive", "b:didBecomeActive"])
        }
    }

    @Test func repeatedRequestsEmitNothing() async throws {
        let journal = Journal()
        let host = try makeHost(names, journal: journal)
        try await host.withRunning {
            try await host.launched()
            _ = journal.drain()

            #expect(try await host.enterForeground() == false)
            #expect(journal.drain().isEmpty)

            #expect(try await host.enterBackground())
            #expect(journal.drain().count == 6)
            #expect(try await host.enterBackground() == false)
            #expect(journal.drain().isEmpty)
            #expect(host.state == .background)
        }
    }

    @Test("requests made before run() wait for the launch and then apply in order")
    func requestsBeforeRunWaitForTheLaunch() async throws {
        let journal = Journal()
        let host = try makeHost(["a"], journal: journal)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addImmediateTask { try await host.enterBackground() }
            group.addImmediateTask { try await host.receiveMemoryWarning(level: .warning) }
            try await host.withRunning {
                try await host.launched()
                try await group.waitForAll()
                #expect(journal.drain() == ["a:willFinishLaunching", "a:didFinishLaunching", "a:didBecomeActive", "a:willResignActive",
                                            "a:didEnterBackground", "a:didReceiveMemoryWarning.warning"])
            }
        }
    }

    @Test func requestsAfterTerminateAreIllegal() async throws {
        let journal = Journal()
        let host = try makeHost(names, journal: journal)
        try await host.withRunning {
            try await host.launched()
        }
        _ = journal.drain()
        await #expect(throws: IllegalTransition.self) { try await host.enterBackground() }
        await #expect(throws: IllegalTransition.self) { try await host.enterForeground() }
        await #expect(throws: IllegalTransition.self) { try await host.toggleBackground() }
        await #expect(throws: IllegalTransition.self) { try await host.receiveMemoryWarning(level: .warning) }
        await #expect(throws: IllegalTransition.self) { try await host.setSessionLocked(true) }
        #expect(journal.drain().isEmpty)
        #expect(host.state == .notRunning)
    }

    @Test func afterTerminateOnlyAFreshLaunchIsLegal() async throws {
        let journal = Journal()
        let host = try makeHost(names, journal: journal)
        try await host.withRunning {
            try await host.launched()
            await #expect(throws: LaunchFailure.self, "a host runs once") { try await host.run() }
        }
        _ = journal.drain()
        await #expect(throws: IllegalTransition.self) { try await host.enterBackground() }
        #expect(journal.drain().isEmpty)
    }

    @Test func duplicateNamesAreRefusedEachOne() {
        let journal = Journal()
        let errors = #expect(throws: InvalidConfiguration.self) {
            try makeHost(["a", "b", "a", "b"], journal: journal)
        }
        #expect(errors?.errors.map(\.keyPath) == ["services[2].name", "services[3].name"])
    }

    @Test func statusDescription() async throws {
        let journal = Journal()
        let latch = Latch()
        let host = try PluggableApplicationHost(
            services: [
                descriptor(Recorder(name: "logger", journal: journal)),
                descriptor(Recorder(name: "slow", journal: journal, hangs: ["didEnterBackground": latch]), deadline: .milliseconds(100)),
            ],
            // The overrun is what this test reads; a stall (300 ms by default here) would add a
            // health problem to the text when a loaded machine reads the status late.
            configuration: .init(stallLimit: .seconds(3600)),
            logger: quietLogger
        )
        #expect(host.status.description == "notRunning · 2 services")
        try await host.withRunning {
            // Let the held hook go before the scope waits for run(), which waits for it.
            defer { latch.open() }
            try await host.launched()
            #expect(host.status.description == "active · 2 services")
            try await host.enterBackground()
            let status = host.status
            #expect(status.description == "background · 2 services · slow overran applicationDidEnterBackground (100ms)")
            #expect(status.lastOverrun == Overrun(service: "slow", hook: "applicationDidEnterBackground", deadline: .milliseconds(100)))
            #expect(status.services.map(\.name) == ["logger", "slow"])
            #expect(status.services[1].lastOverrun?.hook == "applicationDidEnterBackground")
        }
    }

    @Test func statusSaysWhySessionIsLocked() async throws {
        let host = try PluggableApplicationHost(services: [descriptor(Recorder(name: "a", journal: Journal()))], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            try await host.setSessionLocked(true, reason: "secret unavailable: /run/x does not exist")
            #expect(host.status.description == "active · 1 service · session locked (secret unavailable: /run/x does not exist)")
            try await host.setSessionLocked(true, reason: "entered background")
            #expect(host.status.sessionLockReason == "entered background", "a repeated lock updates the reason")
            try await host.setSessionLocked(false)
            #expect(host.status.description == "active · 1 service")
        }
    }

    @Test("reports: the launch's status, READY with the active status, one status per request, STOPPING, the stopped status")
    func reportsFollowTheRequests() async throws {
        let journal = Journal()
        let host = try PluggableApplicationHost(services: [descriptor(Recorder(name: "a", journal: journal))], logger: quietLogger)
        let reports = host.reports
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            try await host.enterBackground()
            await host.terminate(reason: "SIGTERM")
        }
        var lines: [String] = []
        for await report in reports {
            switch report {
            case .status(let status): lines.append("status \(status)")
            case .ready(let status): lines.append("ready \(status)")
            case .stopping(let reason): lines.append("stopping \(reason)")
            case .stopped(let status): lines.append("stopped \(status)")
            case .progress, .reloading, .launchFailed: continue
            }
        }
        #expect(lines == [
            "status launching · 1 service",
            "ready active · 1 service",
            "status background · 1 service",
            "stopping SIGTERM",
            "stopped notRunning · 1 service",
        ])
    }

    @Test("the launch state is made durable once the launch is over and reported, not on the way to READY")
    func launchStateIsSyncedAfterTheLaunch() async throws {
        struct JournaledLaunchState: LaunchStateStorage {
            let journal: Journal
            func beginLaunch() throws -> LaunchOptions {
                journal.record("launch-state:begin")
                return LaunchOptions(kind: .firstLaunch, launchCount: 1, installationID: InstallationID(), previousExit: .none)
            }
            func makeLaunchDurable() throws { journal.record("launch-state:durable") }
            func markCleanExit(of options: LaunchOptions) throws -> String? { nil }
        }
        /// The host keeps its restorable state right before it reports a request's status, so
        /// "restorable:keep" marks where the launch's READY=1 goes out.
        struct JournaledRestorableState: RestorableStateStorage {
            let journal: Journal
            func restore(warning: (String) -> Void) -> RestorableState? { nil }
            func keep(_ state: RestorableState) throws { journal.record("restorable:keep") }
            func persist(_ state: RestorableState) {}
        }
        let journal = Journal()
        var configuration = PluggableApplicationHost.Configuration(hookDeadline: .seconds(2), launchDeadline: .seconds(2), terminateDeadline: .seconds(2))
        configuration.launchState = JournaledLaunchState(journal: journal)
        configuration.restorableState = JournaledRestorableState(journal: journal)
        let host = try PluggableApplicationHost(services: ["a", "b"].map { descriptor(Recorder(name: $0, journal: journal)) }, configuration: configuration, logger: quietLogger)
        let reports = host.reports
        try await host.withRunning {
            try await host.launched()
            await host.terminate()
        }
        #expect(journal.drain() == ["launch-state:begin", "a:willFinishLaunching", "a:didFinishLaunching", "b:willFinishLaunching", "b:didFinishLaunching",
                                    "a:didBecomeActive", "b:didBecomeActive", "restorable:keep", "launch-state:durable",
                                    "b:willTerminate", "a:willTerminate"])
        var readyCount = 0
        for await report in reports {
            if case .ready = report { readyCount += 1 }
        }
        #expect(readyCount == 1)

        // A failed launch is synced too: its count and marker are as real as a good one's.
        var failing = Recorder(name: "a", journal: journal)
        failing.didFinish = .fail
        let failed = try PluggableApplicationHost(services: [descriptor(failing)], configuration: configuration, logger: quietLogger)
        try? await failed.run()
        #expect(journal.drain() == ["launch-state:begin", "a:willFinishLaunching", "a:didFinishLaunching", "restorable:keep", "launch-state:durable"])
    }

    @Test func applicationHandleShowsLiveState() async throws {
        struct Peeker: ApplicationService {
            let journal: Journal
            func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
                journal.record("\(application.serviceName):\(application.state):\(application.launchOptions?.launchCount ?? 0)")
            }
            func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
                journal.record("locked-before:\(application.isSessionLocked)")
            }
        }
        let journal = Journal()
        let host = try PluggableApplicationHost(services: [ServiceDescriptor(name: "peek", service: Peeker(journal: journal))], logger: quietLogger)
        try await host.withRunning {
            try await host.launched()
            try await host.enterBackground()
            try await host.setSessionLocked(true)
            #expect(journal.entries == ["peek:background:1", "locked-before:false"])
        }
    }
}

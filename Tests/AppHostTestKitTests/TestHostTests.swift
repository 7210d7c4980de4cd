import AppHost
import AppHostTestKit
import Testing

/// A service that remembers nothing and refuses nothing: the hook order is the host's.
private struct PlainService: ApplicationService {}

/// Refuses its first launch step.
private struct RefusingService: ApplicationService {
    func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        false
    }
}

/// Locks the session from its run loop, as a service reacting to something outside would.
private struct LockingService: ApplicationService {
    func run(_ application: ApplicationHandle) async throws {
        application.bus.publish(SessionLockDidChange(isLocked: true, reason: "test"))
    }
}

/// Logs a line in the background.
private struct ChattyService: ApplicationService {
    func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        application.logger.notice("flushed", metadata: ["records": "3"])
    }
}

private func services(_ names: String...) -> [ServiceDescriptor] {
    names.map { ServiceDescriptor(name: $0, service: PlainService()) }
}

@Suite struct TestHostTests {
    @Test func recordsEveryHookCallInTheOrderTheHostMadeIt() async throws {
        try await withTestHost(services("first", "second")) { host in
            try await host.launched()
            try await host.enterBackground()
            #expect(host.calls.all == [
                RecordedHookCall("first", .willFinishLaunching), RecordedHookCall("first", .didFinishLaunching),
                RecordedHookCall("second", .willFinishLaunching), RecordedHookCall("second", .didFinishLaunching),
                RecordedHookCall("first", .didBecomeActive), RecordedHookCall("second", .didBecomeActive),
                RecordedHookCall("second", .willResignActive), RecordedHookCall("first", .willResignActive),
                RecordedHookCall("second", .didEnterBackground), RecordedHookCall("first", .didEnterBackground),
            ])
            #expect(host.state == .background)
        }
    }

    @Test func terminatesTheHostWhenTheBodyReturns() async throws {
        let recorded = try await withTestHost(services("only")) { host in
            try await host.launched()
            return host
        }
        #expect(recorded.state == .notRunning)
        #expect(recorded.events(of: "only").last == .willTerminate)
    }

    @Test func feedsMemoryWarningsAndSessionLockChanges() async throws {
        try await withTestHost(services("a", "b")) { host in
            try await host.launched()
            try await host.receiveMemoryWarning(level: .critical)
            #expect(host.services(receiving: .didReceiveMemoryWarning(.critical)) == ["a", "b"])
            #expect(try await host.setSessionLocked(true))
            #expect(host.services(receiving: .protectedDataWillBecomeUnavailable) == ["b", "a"])
            #expect(host.status.sessionLockReason != nil)
        }
    }

    @Test func awaitsWhatAServiceDoesOnItsOwn() async throws {
        let descriptors = [ServiceDescriptor(name: "lock", service: LockingService())]
        try await withTestHost(descriptors) { host in
            try await host.launched()
            try await host.waitForCall(.protectedDataWillBecomeUnavailable, of: "lock")
            #expect(host.status.sessionLockReason == "test")
        }
    }

    @Test func waitsUntilAState() async throws {
        try await withTestHost(services("a")) { host in
            try await host.waitUntil(.active)
            #expect(host.events(of: "a") == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
        }
    }

    @Test func aFailedLaunchIsWhatLaunchedThrows() async throws {
        let descriptors = services("first") + [ServiceDescriptor(name: "refuses", service: RefusingService())]
        try await withTestHost(descriptors) { host in
            let failure = await #expect(throws: LaunchFailure.self) { try await host.launched() }
            #expect(failure?.service == "refuses")
            // The rollback: the service launched before it is terminated.
            try await host.waitForCall(.willTerminate, of: "first")
        }
    }

    @Test func aWaitThatRunsOutSaysWhatHappenedInstead() async throws {
        try await withTestHost(services("a"), timeout: .milliseconds(50)) { host in
            try await host.launched()
            let timeout = await #expect(throws: TestHostTimeout.self) {
                try await host.waitForCall(.didEnterBackground, of: "a")
            }
            #expect(timeout?.description.contains("a: didBecomeActive") == true)
            #expect(timeout?.state == .active)
        }
    }

    @Test func capturesWhatServicesLog() async throws {
        let descriptors = [ServiceDescriptor(name: "chatty", service: ChattyService())]
        try await withTestHost(descriptors) { host in
            try await host.launched()
            try await host.enterBackground()
            let record = await host.logs.first { $0.message == "flushed" }
            #expect(record?.level == .notice)
            #expect(record?.metadata["records"] == "3")
        }
    }

    @Test func recordsServicesAReloadAdds() async throws {
        try await withTestHost(services("a")) { host in
            try await host.launched()
            let reload = try await host.reload(services("a", "added"))
            #expect(reload.added == ["added"])
            #expect(host.events(of: "added") == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
        }
    }
}

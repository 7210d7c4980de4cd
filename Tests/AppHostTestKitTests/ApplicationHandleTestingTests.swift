import AppHost
import AppHostTestKit
import Testing

/// Counts its foreground entries and says so on the bus.
private struct ForegroundCounter: ApplicationService {
    struct Counted: Sendable, Equatable { let service: String; let state: ApplicationState }

    func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
        application.bus.publish(Counted(service: application.serviceName, state: application.state))
    }
}

@Suite struct ApplicationHandleTestingTests {
    @Test func aHookCanBeCalledDirectlyWithATestHandle() async throws {
        let bus = MessageBus()
        let counted = bus.subscribe(to: ForegroundCounter.Counted.self)
        try await ForegroundCounter().applicationWillEnterForeground(.testing(serviceName: "counter", state: .background, bus: bus))
        var iterator = counted.makeAsyncIterator()
        #expect(await iterator.next() == ForegroundCounter.Counted(service: "counter", state: .background))
    }

    @Test func theDefaultHandleIsAnActiveFirstLaunch() throws {
        let application = ApplicationHandle.testing(configuration: ["interval": "1s"])
        #expect(application.state == .active)
        #expect(application.launchOptions?.isFirstLaunch == true)
        #expect(application.launchOptions?.previousExit == LaunchOptions.PreviousExit.none)
        #expect(try application.configuration.duration("interval") == .seconds(1))
    }

    @Test func launchOptionsForALaterLaunchAfterACrash() {
        let options = LaunchOptions.testing(launchCount: 3, previousExit: .unclean)
        #expect(options.kind == .restore)
        #expect(options.previousRunEndedUncleanly)
    }

    @Test func capturedLogsKeepEveryRecordWithItsMetadata() async {
        let logs = CapturedLogs()
        var logger = logs.logger(label: "svc")
        logger[metadataKey: "service"] = "svc"
        logger.warning("slow", metadata: ["ms": "12"])
        #expect(logs.all == [CapturedLogRecord(level: .warning, message: "slow", metadata: ["service": "svc", "ms": "12"], label: "svc")])
        #expect(await logs.first(timeout: .milliseconds(10)) { $0.message == "never" } == nil)
    }
}

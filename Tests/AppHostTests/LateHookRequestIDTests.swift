@testable import AppHost
import AppHostTestKit
import AppHostTestSupport
import ServiceContextModule
import Testing

/// A hook that overran its deadline answers during a later request: its "finished … late"
/// line, and the calls that queued behind it, keep the ids of the requests that made them.
@Suite struct LateHookRequestIDTests {
    /// Late in `didEnterBackground` until the test opens its gate; keeps the request id its
    /// `willEnterForeground` runs with.
    final class LateInBackground: ApplicationService, Sendable {
        let gate = Latch()
        let foregroundIDs = TestLog<String?>()

        func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
            await gate.wait()
        }

        func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
            foregroundIDs.append(ServiceContext.current?.hostRequestID)
        }
    }

    // Fails where the late line takes the id of the request in progress when the hook returns.
    @Test("the late line carries the id of the request that called the hook, and a call queued behind it runs and is logged with its own request's id")
    func lateLinesKeepTheirRequestIDs() async throws {
        let service = LateInBackground()
        let configuration = PluggableApplicationHost.Configuration(hookDeadline: .milliseconds(50), launchDeadline: .seconds(5), terminateDeadline: .seconds(5), stallLimit: .seconds(30))
        try await withTestHost([ServiceDescriptor(name: "late", service: service)], configuration: configuration) { host in
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            try await host.enterBackground()
            let background = try #require(records.all.last { $0.event == .didEnterBackground }?.requestID)
            // The foreground's request: willEnterForeground queues behind the late hook.
            try await host.enterForeground()
            let foreground = try #require(records.all.last { $0.event == .willEnterForeground }?.requestID)
            #expect(background != foreground)
            // A third request is in progress, or was last, when the late hook returns.
            try await host.receiveMemoryWarning(level: .warning)
            service.gate.open()
            let late = await host.logs.first { $0.message == "late finished applicationDidEnterBackground late" }
            #expect(late?.metadata["request_id"] == background, "\(String(describing: late))")
            #expect(await service.foregroundIDs.first { _ in true } == .some(foreground), "the queued call ran with its own request's id")
            let queued = await host.logs.first { $0.message == "late finished applicationWillEnterForeground late" }
            #expect(queued?.metadata["request_id"] == foreground, "\(String(describing: queued))")
        }
    }
}

@testable import AppHost
import AppHostTestSupport
import ServiceContextModule
import Testing

/// A condition of the machine reported again while its request waits in the queue merges into
/// it: one fan-out with the newest value answers every caller.
@Suite struct ConditionMergeTests {
    @Test("memory warnings that wait in the queue merge into one, at the highest level, and every caller is answered")
    func memoryWarningsMerge() async throws {
        let journal = Journal()
        let host = try makeHost(["a"], journal: journal)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Sent before run(): the launch's wait for its hooks takes them into the queue
            // before its own run's answer, so all three wait there together.
            group.addImmediateTask { try await host.receiveMemoryWarning(level: .warning) }
            group.addImmediateTask { try await host.receiveMemoryWarning(level: .critical) }
            group.addImmediateTask { try await host.receiveMemoryWarning(level: .warning) }
            try await host.withRunning {
                try await host.launched()
                try await group.waitForAll()
                #expect(journal.drain() == ["a:willFinishLaunching", "a:didFinishLaunching", "a:didBecomeActive", "a:didReceiveMemoryWarning.critical"])
            }
        }
    }

    @Test("time changes that come while a slow hook runs merge into one call, in the background too, with every cause in its context")
    func timeChangesMerge() async throws {
        let journal = Journal()
        try await whileABackgroundHookWaits(journal: journal) { host, group in
            for change: SignificantTimeChange in [.clock, .timezone, .clock, .midnight] {
                group.addImmediateTask { try await host.receiveSignificantTimeChange(change) }
            }
        } after: { host in
            try await host.receiveSignificantTimeChange(.daylightSaving)
            #expect(journal.drain().filter { $0.contains("significantTimeChange") } == [
                "a:significantTimeChange(clock,timezone,midnight)", "a:significantTimeChange(daylight-saving)",
            ])
        }
    }

    @Test("a time change after the host terminated is refused, as a memory warning is")
    func timeChangeAfterTerminateIsRefused() async throws {
        let host = try makeHost(["a"], journal: Journal())
        try await host.withRunning {
            try await host.launched()
            await host.terminate()
        }
        await #expect(throws: IllegalTransition.self) { try await host.receiveSignificantTimeChange(.clock) }
    }

    @Test("a request's cause names the changes it carries; other words are left out", arguments: [
        ("timezone", SignificantTimeChange?.some(.timezone)),
        ("clock,midnight", .some([.clock, .midnight])),
        ("daylight-saving,sleep", .some(.daylightSaving)),
        ("sleep", nil),
    ])
    func causesNameTheChange(_ text: String, _ change: SignificantTimeChange?) {
        #expect(SignificantTimeChange(causes: text) == change)
        if let change { #expect(SignificantTimeChange(causes: change.description) == change) }
    }

    @Test("merged causes: each once, in the order they came", arguments: [
        (String?.none, String?.none, String?.none),
        ("memory-pressure", nil, "memory-pressure"),
        (nil, "network", "network"),
        ("network", "network", "network"),
        ("clock", "timezone,clock", "clock,timezone"),
    ])
    func causesCombine(_ first: String?, _ second: String?, _ combined: String?) {
        #expect(ServiceContext.combining(first, second) == combined)
    }
}

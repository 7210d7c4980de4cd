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

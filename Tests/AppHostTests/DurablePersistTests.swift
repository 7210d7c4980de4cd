@testable import AppHost
import AppHostTestKit
import AppHostTestSupport
import Testing

/// The sleep's request answers once the restorable state is on disk: the storage's durable
/// persist is a step of the request, not a closure the daemon wires beside it.
@Suite struct DurablePersistTests {
    /// A storage whose durable persist waits until the test lets it finish; records what it got.
    final class SlowDisk: RestorableStateStorage, Sendable {
        let durable = TestLog<RestorableState>()
        let finished = TestLog<UInt64>()
        let gate = Latch()

        func restore(warning: (String) -> Void) -> RestorableState? { nil }
        func keep(_ state: RestorableState) throws {}
        func persist(_ state: RestorableState) {}

        func persistDurably(_ state: RestorableState) async {
            durable.append(state)
            await gate.wait()
            finished.append(state.generation)
        }
    }

    // Fails when the sleep's request answers before the storage said the state is on disk.
    @Test("prepareForMachineSleep returns only after the storage's durable persist of the state after the background")
    func theSleepAnswersOnceOnDisk() async throws {
        let disk = SlowDisk()
        try await withTestHost([ServiceDescriptor(name: "s", service: IdleService())], configuration: .init(restorableState: disk)) { host in
            try await host.launched()
            let answered = TestLog<Bool>()
            let pluggable = host.host
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask {
                    try await pluggable.prepareForMachineSleep(.sleep)
                    answered.append(true)
                }
                let handed = await disk.durable.first { _ in true }
                #expect(handed?.isInBackground == true, "the state after the background goes to disk")
                #expect(answered.all.isEmpty, "answered before the disk")
                disk.gate.open()
            }
            #expect(answered.all == [true])
            #expect(disk.finished.all.count == 1)
            // A plain background persists without waiting.
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.state == .active)
            try await host.enterBackground()
            #expect(disk.durable.all.count == 1)
        }
    }
}

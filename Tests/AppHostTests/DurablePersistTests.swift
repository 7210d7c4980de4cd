@testable import AppHost
import AppHostTestKit
import AppHostTestSupport
import Synchronization
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
                #expect(handed != nil, "the state after the background goes to disk")
                #expect(handed?.isInBackground == false, "with where the resume returns: the foreground")
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


    // Fails where a terminate that overtakes the sleep's request skips its durable persist:
    // logind would be let go with the state not on disk.
    @Test("a terminate during the sleep's request: the request still answers only once the state is on disk")
    func aTerminateDuringTheSleepStillWaitsForTheDisk() async throws {
        let disk = SlowDisk()
        disk.gate.open()
        let stuck = Stuck()
        try await withTestHost([ServiceDescriptor(name: "s", service: stuck)], configuration: .init(restorableState: disk)) { host in
            try await host.launched()
            let pluggable = host.host
            async let prepared: Void = pluggable.prepareForMachineSleep(.sleep)
            _ = try await host.waitForCall(.didEnterBackground, of: "s")
            async let terminated: Void = pluggable.terminate(reason: "SIGTERM during the sleep")
            // The terminate is queued behind the hook in progress, and pending from its arrival.
            _ = await host.logs.first { $0.message.hasPrefix("terminating") }
            stuck.releaseHook()
            try await prepared
            #expect(disk.durable.all.count == 1 && disk.finished.all.count == 1, "the sleep's answer came without the disk")
            #expect(disk.durable.all.first?.isInBackground == false, "kept where the resume would return: the foreground")
            await terminated
        }
    }
}

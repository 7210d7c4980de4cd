@testable import AppHost
import AppHostTestKit
import AppHostTestSupport
import Testing

/// The machine's sleep as requests of the host, in the order they are carried out: where the
/// resume returns is the machine's, not read off the host when logind's signal arrived.
@Suite struct MachineSleepTests {
    static let moves: [LifecycleEvent] = [.willResignActive, .didEnterBackground, .willEnterForeground, .didBecomeActive]

    @Test("a sleep from the foreground goes to the background and the resume comes back, with their causes")
    func aSleepAndItsResume() async throws {
        try await withTestHost([ServiceDescriptor(name: "s", service: IdleService())]) { host in
            let records = host.messages(of: LifecycleEventRecord.self)
            try await host.launched()
            try await host.host.prepareForMachineSleep(.sleep)
            #expect(host.state == .background)
            #expect(records.all.last?.event == .didEnterBackground && records.all.last?.cause == "sleep")
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.state == .active)
            #expect(records.all.last?.event == .didBecomeActive && records.all.last?.cause == "resume")
        }
    }

    @Test("a SIGUSR1 carried out just before the sleep is kept: the resume leaves the host in the background")
    func aToggleBeforeTheSleep() async throws {
        try await withTestHost([ServiceDescriptor(name: "s", service: IdleService())]) { host in
            try await host.launched()
            try await host.host.toggleBackground()
            try await host.host.prepareForMachineSleep(.sleep)
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.state == .background)
            #expect(host.events(of: "s").filter(Self.moves.contains).suffix(2) == [.willResignActive, .didEnterBackground])
        }
    }

    // Fails when the host reads its return state when logind's signal arrives, or carries the
    // toggle out while the machine sleeps: the services would come to the foreground then.
    @Test("a SIGUSR1 while the sleep's saving request runs wakes no service while the machine sleeps, and the resume goes where it asked")
    func aToggleDuringTheSleep() async throws {
        let stuck = Stuck()
        try await withTestHost([ServiceDescriptor(name: "s", service: stuck)]) { host in
            try await host.launched()
            async let prepared: Void = host.host.prepareForMachineSleep(.sleep)
            _ = try await host.waitForCall(.didEnterBackground, of: "s")
            async let toggled = host.host.toggleBackground()
            stuck.releaseHook()
            try await prepared
            #expect(try await toggled == .background, "the host stays in the background while the machine sleeps")
            #expect(!host.events(of: "s").contains(.willEnterForeground))
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.state == .background, "the toggle asked for the background")
            #expect(!host.events(of: "s").contains(.willEnterForeground))

            // And the other way: in the background at the sleep, a toggle during it asks for the foreground.
            try await host.host.prepareForMachineSleep(.sleep)
            try await host.host.toggleBackground()
            #expect(host.state == .background)
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.state == .active)
        }
    }

    @Test("logind gone mid-sleep: a resume without a kind ends the sleep; a resume without a sleep does nothing")
    func aResumeWithoutItsSignal() async throws {
        try await withTestHost([ServiceDescriptor(name: "s", service: IdleService())]) { host in
            try await host.launched()
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.events(of: "s").filter(Self.moves.contains) == [.didBecomeActive])
            try await host.host.prepareForMachineSleep(.sleep)
            try await host.host.prepareForMachineSleep(.shutdown)
            try await host.host.machineDidResume(from: .sleep)
            #expect(host.state == .background, "the shutdown's preparation is not over")
            try await host.host.machineDidResume(from: nil)
            #expect(host.state == .active)
        }
    }
}

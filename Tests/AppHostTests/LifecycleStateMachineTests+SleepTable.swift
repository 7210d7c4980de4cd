@testable import AppHost
import Testing

extension LifecycleStateMachineTests {
    static func asleep(returningTo state: ApplicationState, _ kinds: Set<MachineSleepKind> = [.sleep]) -> MachineSleep {
        MachineSleep(returningTo: state, kinds: kinds)
    }

    /// While the machine sleeps (the host in the background, the session unlocked, no terminate
    /// pending), every request, returning to the foreground and to the background. A move
    /// between foreground and background changes only where the resume returns; the resume
    /// goes there; every other request goes as in the background awake (the main table's row).
    static let sleepTable: [Row] = [ApplicationState.active, .background].flatMap { after -> [Row] in
        let sleep = asleep(returningTo: after)
        let own: [LifecycleRequest: [LifecycleAction]?] = [
            .enterBackground: after == .background ? [] : [.setSleep(asleep(returningTo: .background))],
            .enterForeground: after == .active ? [] : [.setSleep(asleep(returningTo: .active))],
            .toggleBackground: [.setSleep(asleep(returningTo: after == .active ? .background : .active))],
            // A second preparation keeps the first's return state, and saves again.
            .prepareForSleep(.sleep): [.setSleep(sleep), .persistRestorableStateDurably],
            .resume(.sleep): [.setSleep(nil)] + (after == .active ? toForeground : []),
        ]
        return requests.map { request in
            if let steps = own[request] { return Row(.background, request, locked: false, pending: false, sleep: sleep, steps) }
            let awake = table.first { $0.state == .background && $0.request == request && !$0.locked && !$0.pending }
            return Row(.background, request, locked: false, pending: false, sleep: sleep, awake?.steps ?? nil)
        }
    }

    @Test func sleepTableCoversEveryRequest() {
        for after in [ApplicationState.active, .background] {
            for request in Self.requests {
                let rows = Self.sleepTable.filter { $0.request == request && $0.sleep?.stateAfter == after }
                #expect(rows.count == 1, "\(request) asleep, back to \(after): \(rows.count) rows")
            }
        }
        // The derived rows stand on rows the main table has.
        #expect(Self.sleepTable.filter { $0.steps == nil }.allSatisfy { row in
            Self.table.contains { $0.state == .background && $0.request == row.request && !$0.locked && !$0.pending && $0.steps == nil }
        })
    }

    @Test("a SIGUSR1 just before the sleep, then the sleep: the resume leaves the host in the background")
    func aToggleBeforeTheSleepIsKept() throws {
        var machine = LifecycleStateMachine(state: .active)
        try perform(machine.decide(.toggleBackground), on: &machine)
        try perform(machine.decide(.prepareForSleep(.sleep)), on: &machine)
        #expect(machine.sleep == Self.asleep(returningTo: .background))
        #expect(machine.decide(.resume(.sleep)) == .perform([.setSleep(nil)]))
    }

    @Test("a SIGUSR1 during the sleep: no event while the machine sleeps, and the resume goes where it asked")
    func aToggleDuringTheSleepWaitsForTheResume() throws {
        var machine = LifecycleStateMachine(state: .background)
        try perform(machine.decide(.prepareForSleep(.sleep)), on: &machine)
        guard case .perform(let toggle) = machine.decide(.toggleBackground) else { Issue.record("refused"); return }
        #expect(!toggle.contains { if case .deliver = $0 { true } else { false } }, "\(toggle)")
        try perform(.perform(toggle), on: &machine)
        #expect(machine.state == .background)
        #expect(machine.decide(.resume(.sleep)) == .perform([.setSleep(nil)] + Self.toForeground))
    }

    @Test("a sleep and a shutdown that overlap: the host resumes once both are over, or when the source is gone")
    func overlappingPreparations() throws {
        var machine = LifecycleStateMachine(state: .active)
        try perform(machine.decide(.prepareForSleep(.sleep)), on: &machine)
        try perform(machine.decide(.prepareForSleep(.shutdown)), on: &machine)
        #expect(machine.sleep == Self.asleep(returningTo: .active, [.sleep, .shutdown]))
        #expect(machine.decide(.resume(.sleep)) == .perform([.setSleep(Self.asleep(returningTo: .active, [.shutdown]))]))
        #expect(machine.decide(.resume(nil)) == .perform([.setSleep(nil)] + Self.toForeground))
        try perform(machine.decide(.resume(.sleep)), on: &machine)
        #expect(machine.decide(.resume(.shutdown)) == .perform([.setSleep(nil)] + Self.toForeground))
    }

    @Test("a terminate during the sleep comes first; the resume after it is refused")
    func terminateDuringTheSleep() throws {
        var machine = LifecycleStateMachine(state: .background, sleep: Self.asleep(returningTo: .active))
        #expect(machine.decide(.terminate) == .perform([.setTerminatePending, .dropQueuedRequests]))
        machine.setTerminatePending()
        guard case .refuse(let refusal) = machine.decide(.resume(.sleep)) else { Issue.record("not refused"); return }
        #expect(refusal.isTerminatePending)
    }

    /// Performs what waits for nothing, as the loop's `apply` does, and moves.
    func perform(_ decision: LifecycleDecision, on machine: inout LifecycleStateMachine) throws {
        guard case .perform(let actions) = decision else { throw IllegalTransition(from: machine.state, to: machine.state) }
        for action in actions {
            switch action {
            case .move(let target): try machine.transition(to: target)
            case .setSleep(let sleep): machine.setSleep(sleep)
            case .setTerminatePending: machine.setTerminatePending()
            default: break
            }
        }
    }
}

@testable import AppHost
import Testing

/// The one place a request's legality is asserted: every (state, terminate pending, request)
/// triple, with the steps the machine answers or its refusal. The host's loop holds no rule of
/// its own.
@Suite struct LifecycleStateMachineTests {
    /// One triple: in `state` (the session `locked` or not, a terminate `pending` or not),
    /// `request` yields `steps`, or is refused when `steps` is nil.
    struct Row: Sendable, CustomTestStringConvertible {
        let state: ApplicationState
        let request: LifecycleRequest
        let locked: Bool
        let pending: Bool
        /// The machine's sleep the host waits in (the sleep table); nil: awake.
        let sleep: MachineSleep?
        let steps: [LifecycleAction]?

        init(_ state: ApplicationState, _ request: LifecycleRequest, locked: Bool, pending: Bool, sleep: MachineSleep? = nil, _ steps: [LifecycleAction]?) {
            self.state = state
            self.request = request
            self.locked = locked
            self.pending = pending
            self.sleep = sleep
            self.steps = steps
        }

        /// The machine the row starts from; a locked session was locked because of "screen".
        var machine: LifecycleStateMachine {
            LifecycleStateMachine(state: state, isProtectedDataAvailable: !locked, sessionLockReason: locked ? "screen" : nil, isTerminatePending: pending, sleep: sleep)
        }

        var testDescription: String {
            "\(request) while \(state)\(locked ? " (locked)" : "")\(pending ? " (terminate pending)" : "")\(sleep.map { " (asleep, back to \($0.stateAfter))" } ?? "")"
        }
    }

    @Test(arguments: table + sleepTable)
    func decides(_ row: Row) {
        switch (row.machine.decide(row.request), row.steps) {
        case (.perform(let actions), let steps?):
            #expect(actions == steps)
        case (.refuse(let refusal), nil):
            #expect(refusal.state == row.state && refusal.request == row.request && refusal.isTerminatePending == row.pending)
            #expect(!refusal.reason.isEmpty)
            #expect(refusal.illegalTransition.from == (row.pending ? .terminating : row.state))
        case (let decision, let steps):
            Issue.record("\(row.testDescription): decided \(decision), the table says \(steps.map { "\($0)" } ?? "refused")")
        }
    }

    @Test func tableCoversEveryTriple() {
        for state in ApplicationState.allCases {
            for pending in [false, true] {
                for request in Self.requests {
                    let locks: [Bool] = if case .sessionLock = request, [.active, .inactive, .background].contains(state) { [false, true] } else { [false] }
                    for locked in locks {
                        let rows = Self.table.filter { $0.state == state && $0.request == request && $0.locked == locked && $0.pending == pending }
                        #expect(rows.count == 1, "\(request) while \(state), locked: \(locked), pending: \(pending): \(rows.count) rows")
                    }
                }
            }
        }
    }

    @Test("a request's steps, performed, lead where the request says", arguments: table.filter { $0.steps?.isEmpty == false })
    func stepsAreLegalMoves(_ row: Row) throws {
        var machine = row.machine
        for step in row.steps ?? [] {
            switch step {
            case .move(let target): #expect(try machine.transition(to: target))
            case .setProtectedDataAvailable(let available): machine.setProtectedDataAvailable(available)
            case .setSessionLockReason(let reason): machine.setSessionLockReason(reason)
            case .setTerminatePending: machine.setTerminatePending()
            default: break
            }
        }
        switch row.request {
        case .sessionLock(let locked, let reason):
            #expect(machine.isProtectedDataAvailable == !locked)
            if locked, !reason.isEmpty { #expect(machine.sessionLockReason == reason) }
        case .restoreSessionLock(let reason):
            #expect(!machine.isProtectedDataAvailable && machine.sessionLockReason == reason)
        case .terminate:
            #expect(machine.isTerminatePending)
        default:
            #expect(machine.state == row.request.target(from: row.state) || machine.state == .notRunning)
        }
    }

    @Test("a terminate that arrives is pending from then on, and every later request but the launch's and terminate's is refused")
    func terminatePendingRefusesTheRest() {
        var machine = LifecycleStateMachine(state: .active)
        guard case .perform(let actions) = machine.decide(.terminate) else {
            Issue.record("terminate refused")
            return
        }
        #expect(actions == [.setTerminatePending, .dropQueuedRequests])
        machine.setTerminatePending()
        #expect(machine.decide(.terminate) == .perform([]))
        for request in Self.requests {
            switch request {
            case .terminate, .terminateNow, .launch, .continueLaunch, .finishLaunch, .abortLaunch, .restoreSessionLock: continue
            default:
                guard case .refuse(let refusal) = machine.decide(request) else { Issue.record("\(request) not refused"); continue }
                #expect(refusal.isTerminatePending && refusal.illegalTransition.from == .terminating)
            }
        }
    }

    @Test("a service that joins a running host catches up with its state and its lock", arguments: [
        (ApplicationState.active, false, [LifecycleEvent.didBecomeActive]),
        (.background, false, [.didEnterBackground]),
        (.active, true, [.didBecomeActive, .protectedDataWillBecomeUnavailable]),
        (.background, true, [.didEnterBackground, .protectedDataWillBecomeUnavailable]),
    ])
    func catchUp(state: ApplicationState, locked: Bool, events: [LifecycleEvent]) {
        #expect(LifecycleStateMachine(state: state, isProtectedDataAvailable: !locked).eventsToCatchUp == events)
    }

    static let legal: [(ApplicationState, ApplicationState)] = [
        (.notRunning, .launching),
        (.launching, .active),
        // A restore after an unclean exit in the background launches into the background.
        (.launching, .background),
        (.active, .inactive),
        (.inactive, .active),
        (.inactive, .background),
        (.background, .inactive),
        (.launching, .terminating),
        (.active, .terminating),
        (.inactive, .terminating),
        (.background, .terminating),
        (.terminating, .notRunning),
    ]

    static let illegal: [(ApplicationState, ApplicationState)] = [
        (.notRunning, .active),
        (.notRunning, .background),
        (.notRunning, .inactive),
        (.notRunning, .terminating),
        (.launching, .inactive),
        (.launching, .notRunning),
        (.active, .background),
        (.active, .launching),
        (.active, .notRunning),
        (.background, .active),
        (.background, .notRunning),
        (.background, .launching),
        (.inactive, .launching),
        (.inactive, .notRunning),
        (.terminating, .active),
        (.terminating, .launching),
        (.terminating, .background),
        (.terminating, .inactive),
    ]

    @Test(arguments: legal)
    func legalTransitionMoves(from: ApplicationState, to: ApplicationState) throws {
        var machine = LifecycleStateMachine(state: from)
        #expect(LifecycleStateMachine.isLegal(from: from, to: to))
        #expect(try machine.transition(to: to) == true)
        #expect(machine.state == to)
    }

    @Test(arguments: illegal)
    func illegalTransitionThrows(from: ApplicationState, to: ApplicationState) {
        var machine = LifecycleStateMachine(state: from)
        #expect(throws: IllegalTransition(from: from, to: to)) {
            try machine.transition(to: to)
        }
        #expect(machine.state == from)
    }

    @Test(arguments: ApplicationState.allCases)
    func sameStateIsANoOp(state: ApplicationState) throws {
        var machine = LifecycleStateMachine(state: state)
        #expect(try machine.transition(to: state) == false)
        #expect(machine.state == state)
        #expect(!LifecycleStateMachine.isLegal(from: state, to: state))
    }

    @Test func tablesCoverEveryPair() {
        let states = ApplicationState.allCases
        let listed = Set((Self.legal + Self.illegal).map { "\($0.0)>\($0.1)" })
        for from in states {
            for to in states where from != to {
                #expect(listed.contains("\(from)>\(to)"), "\(from) → \(to) is in neither table")
                let expected = Self.legal.contains { $0 == (from, to) }
                #expect(LifecycleStateMachine.isLegal(from: from, to: to) == expected, "\(from) → \(to)")
            }
        }
    }

    @Test func fullLifecycleWalk() throws {
        var machine = LifecycleStateMachine()
        for state in [ApplicationState.launching, .active, .inactive, .background, .inactive, .active, .terminating, .notRunning] {
            try machine.transition(to: state)
        }
        #expect(machine.state == .notRunning)
    }
}

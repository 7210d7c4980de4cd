@testable import AppHost
import Testing

/// The one place a request's legality is asserted: every (state, request) pair, with the steps
/// the machine answers or its refusal. The host's loop holds no rule of its own.
@Suite struct LifecycleStateMachineTests {
    /// One pair: in `state` (the session `locked` or not), `request` yields `steps`, or is
    /// refused when `steps` is nil.
    struct Row: Sendable, CustomTestStringConvertible {
        let state: ApplicationState
        let request: LifecycleRequest
        let locked: Bool
        let steps: [LifecycleAction]?

        init(_ state: ApplicationState, _ request: LifecycleRequest, locked: Bool, _ steps: [LifecycleAction]?) {
            self.state = state
            self.request = request
            self.locked = locked
            self.steps = steps
        }

        var testDescription: String { "\(request) while \(state)\(locked ? " (locked)" : "")" }
    }

    static let requests: [LifecycleRequest] = [
        .launch, .enterBackground, .enterForeground, .toggleBackground, .memoryWarning(.critical),
        .sessionLock(true), .sessionLock(false), .reload, .terminate,
    ]

    /// Only session lock requests depend on the lock; the others are listed unlocked.
    static let table: [Row] = [
        Row(.notRunning, .launch, locked: false, [.move(to: .launching), .launchServices]),
        Row(.notRunning, .enterBackground, locked: false, nil),
        Row(.notRunning, .enterForeground, locked: false, nil),
        Row(.notRunning, .toggleBackground, locked: false, nil),
        Row(.notRunning, .memoryWarning(.critical), locked: false, nil),
        Row(.notRunning, .reload, locked: false, nil),
        Row(.notRunning, .terminate, locked: false, []),
        Row(.notRunning, .sessionLock(true), locked: false, nil),
        Row(.notRunning, .sessionLock(false), locked: false, nil),
        Row(.launching, .launch, locked: false, nil),
        Row(.launching, .enterBackground, locked: false, nil),
        Row(.launching, .enterForeground, locked: false, nil),
        Row(.launching, .toggleBackground, locked: false, nil),
        Row(.launching, .memoryWarning(.critical), locked: false, nil),
        Row(.launching, .reload, locked: false, nil),
        Row(.launching, .terminate, locked: false, [.move(to: .terminating), .terminateServices, .move(to: .notRunning)]),
        Row(.launching, .sessionLock(true), locked: false, nil),
        Row(.launching, .sessionLock(false), locked: false, nil),
        Row(.active, .launch, locked: false, nil),
        Row(.active, .enterBackground, locked: false, [.deliver(.willResignActive, from: .active, to: .inactive), .move(to: .inactive), .move(to: .background), .deliver(.didEnterBackground, from: .inactive, to: .background)]),
        Row(.active, .enterForeground, locked: false, []),
        Row(.active, .toggleBackground, locked: false, [.deliver(.willResignActive, from: .active, to: .inactive), .move(to: .inactive), .move(to: .background), .deliver(.didEnterBackground, from: .inactive, to: .background)]),
        Row(.active, .memoryWarning(.critical), locked: false, [.deliver(.didReceiveMemoryWarning(.critical), from: .active, to: .active), .trimHeap(.critical)]),
        Row(.active, .reload, locked: false, [.reloadConfiguration]),
        Row(.active, .terminate, locked: false, [.move(to: .terminating), .terminateServices, .move(to: .notRunning)]),
        Row(.active, .sessionLock(true), locked: false, [.deliver(.protectedDataWillBecomeUnavailable, from: .active, to: .active), .setProtectedDataAvailable(false)]),
        Row(.active, .sessionLock(false), locked: false, []),
        Row(.active, .sessionLock(true), locked: true, []),
        Row(.active, .sessionLock(false), locked: true, [.setProtectedDataAvailable(true), .deliver(.protectedDataDidBecomeAvailable, from: .active, to: .active)]),
        Row(.inactive, .launch, locked: false, nil),
        Row(.inactive, .enterBackground, locked: false, nil),
        Row(.inactive, .enterForeground, locked: false, nil),
        Row(.inactive, .toggleBackground, locked: false, nil),
        Row(.inactive, .memoryWarning(.critical), locked: false, [.deliver(.didReceiveMemoryWarning(.critical), from: .inactive, to: .inactive), .trimHeap(.critical)]),
        Row(.inactive, .reload, locked: false, nil),
        Row(.inactive, .terminate, locked: false, [.move(to: .terminating), .terminateServices, .move(to: .notRunning)]),
        Row(.inactive, .sessionLock(true), locked: false, [.deliver(.protectedDataWillBecomeUnavailable, from: .inactive, to: .inactive), .setProtectedDataAvailable(false)]),
        Row(.inactive, .sessionLock(false), locked: false, []),
        Row(.inactive, .sessionLock(true), locked: true, []),
        Row(.inactive, .sessionLock(false), locked: true, [.setProtectedDataAvailable(true), .deliver(.protectedDataDidBecomeAvailable, from: .inactive, to: .inactive)]),
        Row(.background, .launch, locked: false, nil),
        Row(.background, .enterBackground, locked: false, []),
        Row(.background, .enterForeground, locked: false, [.deliver(.willEnterForeground, from: .background, to: .inactive), .move(to: .inactive), .move(to: .active), .deliver(.didBecomeActive, from: .inactive, to: .active)]),
        Row(.background, .toggleBackground, locked: false, [.deliver(.willEnterForeground, from: .background, to: .inactive), .move(to: .inactive), .move(to: .active), .deliver(.didBecomeActive, from: .inactive, to: .active)]),
        Row(.background, .memoryWarning(.critical), locked: false, [.deliver(.didReceiveMemoryWarning(.critical), from: .background, to: .background), .trimHeap(.critical)]),
        Row(.background, .reload, locked: false, [.reloadConfiguration]),
        Row(.background, .terminate, locked: false, [.move(to: .terminating), .terminateServices, .move(to: .notRunning)]),
        Row(.background, .sessionLock(true), locked: false, [.deliver(.protectedDataWillBecomeUnavailable, from: .background, to: .background), .setProtectedDataAvailable(false)]),
        Row(.background, .sessionLock(false), locked: false, []),
        Row(.background, .sessionLock(true), locked: true, []),
        Row(.background, .sessionLock(false), locked: true, [.setProtectedDataAvailable(true), .deliver(.protectedDataDidBecomeAvailable, from: .background, to: .background)]),
        Row(.terminating, .launch, locked: false, nil),
        Row(.terminating, .enterBackground, locked: false, nil),
        Row(.terminating, .enterForeground, locked: false, nil),
        Row(.terminating, .toggleBackground, locked: false, nil),
        Row(.terminating, .memoryWarning(.critical), locked: false, nil),
        Row(.terminating, .reload, locked: false, nil),
        Row(.terminating, .terminate, locked: false, []),
        Row(.terminating, .sessionLock(true), locked: false, nil),
        Row(.terminating, .sessionLock(false), locked: false, nil),
    ]

    @Test(arguments: table)
    func decides(_ row: Row) {
        let machine = LifecycleStateMachine(state: row.state, isProtectedDataAvailable: !row.locked)
        switch (machine.decide(row.request), row.steps) {
        case (.perform(let actions), let steps?):
            #expect(actions == steps)
        case (.refuse(let refusal), nil):
            #expect(refusal.state == row.state && refusal.request == row.request)
            #expect(!refusal.reason.isEmpty)
            #expect(refusal.illegalTransition.from == row.state)
        case (let decision, let steps):
            Issue.record("\(row.testDescription): decided \(decision), the table says \(steps.map { "\($0)" } ?? "refused")")
        }
    }

    @Test func tableCoversEveryPair() {
        for state in ApplicationState.allCases {
            for request in Self.requests {
                let locks: [Bool] = if case .sessionLock = request, [.active, .inactive, .background].contains(state) { [false, true] } else { [false] }
                for locked in locks {
                    let rows = Self.table.filter { $0.state == state && $0.request == request && $0.locked == locked }
                    #expect(rows.count == 1, "\(request) while \(state), locked: \(locked): \(rows.count) rows")
                }
            }
        }
    }

    @Test("a request's steps, performed, lead where the request says", arguments: table.filter { $0.steps?.isEmpty == false })
    func stepsAreLegalMoves(_ row: Row) throws {
        var machine = LifecycleStateMachine(state: row.state, isProtectedDataAvailable: !row.locked)
        for step in row.steps ?? [] {
            switch step {
            case .move(let target): #expect(try machine.transition(to: target))
            case .setProtectedDataAvailable(let available): machine.setProtectedDataAvailable(available)
            default: break
            }
        }
        if case .sessionLock(let locked) = row.request { #expect(machine.isProtectedDataAvailable == !locked) }
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

    @Test func launchCompletesIntoActiveOrIntoTheBackground() {
        let machine = LifecycleStateMachine(state: .launching)
        #expect(machine.launchCompletionActions() == [.move(to: .active), .deliver(.didBecomeActive, from: .launching, to: .active)])
        #expect(machine.launchCompletionActions(intoBackground: true) == [.move(to: .background), .deliver(.didEnterBackground, from: .launching, to: .background)])
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

@testable import AppHost
import Testing

@Suite struct LifecycleStateMachineTests {
    static let legal: [(ApplicationState, ApplicationState)] = [
        (.notRunning, .launching),
        (.launching, .active),
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
        (.launching, .background),
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

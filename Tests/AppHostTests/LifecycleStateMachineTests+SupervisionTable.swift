@testable import AppHost
import Testing

extension LifecycleStateMachineTests {
    /// Every request the tables cover: the lifecycle's and supervision's.
    static let requests = lifecycleRequests + supervisionRequests
    /// Every row of the main table.
    static let table = lifecycleTable + supervisionTable

    static let supervisionRequests: [LifecycleRequest] = [
        .supervise(.restart(.runLoop)), .supervise(.restart(.instance)), .supervise(.stop(reason: "failed 3 times in 1m")),
        .restartService("db", isKnown: true), .restartService("dbx", isKnown: false),
    ]

    /// A running host (launching included: a run loop's end booked during the launch) carries
    /// out supervision's steps; an unknown service, a host not running, and every step once a
    /// terminate is pending are refused.
    static let supervisionTable: [Row] = [
        Row(.notRunning, .supervise(.restart(.runLoop)), locked: false, pending: false, nil),
        Row(.notRunning, .supervise(.restart(.instance)), locked: false, pending: false, nil),
        Row(.notRunning, .supervise(.stop(reason: "failed 3 times in 1m")), locked: false, pending: false, nil),
        Row(.notRunning, .restartService("db", isKnown: true), locked: false, pending: false, nil),
        Row(.notRunning, .restartService("dbx", isKnown: false), locked: false, pending: false, nil),
        Row(.terminating, .supervise(.restart(.runLoop)), locked: false, pending: false, nil),
        Row(.terminating, .supervise(.restart(.instance)), locked: false, pending: false, nil),
        Row(.terminating, .supervise(.stop(reason: "failed 3 times in 1m")), locked: false, pending: false, nil),
        Row(.terminating, .restartService("db", isKnown: true), locked: false, pending: false, nil),
        Row(.terminating, .restartService("dbx", isKnown: false), locked: false, pending: false, nil),
    ] + [ApplicationState.launching, .active, .inactive, .background].flatMap { state in [
        Row(state, .supervise(.restart(.runLoop)), locked: false, pending: false, [.restartRunLoop]),
        Row(state, .supervise(.restart(.instance)), locked: false, pending: false, [.restartInstance]),
        Row(state, .supervise(.stop(reason: "failed 3 times in 1m")), locked: false, pending: false, [.stopService(reason: "failed 3 times in 1m")]),
        Row(state, .restartService("db", isKnown: true), locked: false, pending: false, [.forgetFailures, .restartInstance]),
        Row(state, .restartService("dbx", isKnown: false), locked: false, pending: false, nil),
    ] } + ApplicationState.allCases.flatMap { state in
        supervisionRequests.map { Row(state, $0, locked: false, pending: true, nil) }
    }

    @Test func supervisionRefusalsSayWhy() {
        let unknown = LifecycleStateMachine(state: .active).refusal(of: .restartService("dbx", isKnown: false))
        #expect(unknown.reason == "the host runs no service of that name")
        let pending = LifecycleStateMachine(state: .active, isTerminatePending: true).refusal(of: .restartService("db", isKnown: true))
        #expect(pending.reason == "a terminate is pending, and nothing restarts once it is")
        // A terminate comes before the service's name is looked at.
        #expect(LifecycleStateMachine(state: .active, isTerminatePending: true).refusal(of: .restartService("dbx", isKnown: false)).isTerminatePending)
    }

    /// The loop's turns: (state, terminate pending, task cancelled, a supervision step due, a
    /// request queued) → what it does next.
    static let turns: [(ApplicationState, Bool, Bool, Bool, Bool, LifecycleStateMachine.Turn)] = [
        (.notRunning, false, false, true, true, .close),
        (.terminating, true, true, true, true, .close),
        (.active, true, false, true, true, .terminate),
        (.background, false, true, true, true, .terminate),
        (.active, false, false, true, true, .supervise),
        (.background, false, false, true, false, .supervise),
        (.active, false, false, false, true, .carryOutQueued),
        (.background, false, false, false, false, .wait),
        (.launching, false, false, false, false, .wait),
    ]

    @Test("the machine orders the loop's work: terminate, a due supervision step, the queue", arguments: turns)
    func nextTurn(_ row: (ApplicationState, Bool, Bool, Bool, Bool, LifecycleStateMachine.Turn)) {
        let (state, pending, cancelled, due, queued, turn) = row
        let machine = LifecycleStateMachine(state: state, isTerminatePending: pending)
        #expect(machine.nextTurn(isCancelled: cancelled, isSupervisionDue: due, hasQueuedRequest: queued) == turn)
    }
}

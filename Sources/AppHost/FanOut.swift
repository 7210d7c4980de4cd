import Synchronization

/// What one service's hook did during a fan-out.
enum HookResult: Sendable, Equatable {
    /// Returned; launch hooks carry their answer, other hooks `true`.
    case returned(Bool)
    /// Threw; the error as text.
    case threw(String)
    /// Still running when its deadline passed; the host moved on.
    case overran(Duration)
    /// Not called now: an earlier hook of the service still runs; the call is queued behind it.
    case deferred
    /// Not called: the service is disabled.
    case skipped
    /// Still running when the host stopped waiting (`FanOut.abandon()`: a terminate during launch).
    case abandoned
}

/// One event delivered to a list of services, one after the other, each under its deadline.
///
/// Hooks run inline in a driver task. A monitor (a child of the caller) sleeps until the current
/// hook's deadline; if the hook is still running then, the monitor records the overrun and starts
/// a fresh driver at the next service, abandoning the stuck one. When the stuck hook finally
/// returns, its driver runs whatever queued up for that service and ends. The fast path costs
/// a lock and a clock read per hook, and one driver and one monitor per event; the monitor
/// arms a timer (a sleeper task) only when it finds the fan-out still running. The
/// monitor sleeps in a cancellable task: a hook that begins with an earlier deadline than the
/// one the monitor sleeps for wakes it, and the finishing driver wakes it to end.
final class FanOut: Sendable {
    typealias Hook = @Sendable (any ApplicationService, Application) async throws -> Bool

    private struct State {
        var driver = 0
        var index = 0
        var startedAt: ContinuousClock.Instant?
        var results: [HookResult]
        var isFinished = false
        var continuation: CheckedContinuation<Void, Never>?
        /// When the monitor's current sleep ends, and the task that sleeps; a hook that begins
        /// with an earlier deadline cancels it so the monitor looks again.
        var wakeAt: ContinuousClock.Instant?
        var sleeper: Task<Void, Never>?
    }

    private let slots: [ServiceSlot]
    private let deadlines: [Duration]
    private let hook: Hook
    private let state: Mutex<State>

    init(slots: [ServiceSlot], deadline: (ServiceSlot) -> Duration, hook: @escaping Hook) {
        self.slots = slots
        self.deadlines = slots.map(deadline)
        self.hook = hook
        self.state = Mutex(State(results: Array(repeating: .skipped, count: slots.count)))
    }

    /// Delivers the event to every slot and returns one result per slot, in slot order.
    func run() async -> [HookResult] {
        guard !slots.isEmpty else { return [] }
        await withTaskGroup(of: Void.self) { group in
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let abandoned = state.withLock { state in
                    if state.isFinished { return true }
                    state.continuation = continuation
                    return false
                }
                if abandoned {
                    continuation.resume()
                    return
                }
                // Unstructured on purpose: a hook may never return, and the host must be able to
                // walk away from it, which it cannot do from a child task it has to await.
                Task { await self.drive(driver: 0, from: 0) }
                // Queued after the driver: when quick hooks have all returned by the time the
                // monitor runs, it ends at once and no timer is ever armed.
                group.addTask { await self.monitor() }
            }
            // The monitor ends on its own once it sees the fan-out finished (the last driver
            // wakes it). It ignores cancellation on purpose: a host whose task was cancelled
            // still terminates its services under their deadlines.
        }
        return state.withLock { $0.results }
    }

    /// Stops waiting: the hook running now is recorded as `.abandoned`, the services after it as
    /// `.skipped`, and `run()` returns at once. The abandoned hook's driver ends when the hook
    /// returns; a later event for that service still queues behind it.
    func abandon() {
        finish { state in
            if state.startedAt != nil, state.index < slots.count { state.results[state.index] = .abandoned }
            state.driver += 1
            return true
        }
    }

    /// Marks the fan-out finished when `shouldFinish` agrees, then stops the monitor's sleep and
    /// lets `run()` return.
    private func finish(if shouldFinish: (inout State) -> Bool) {
        let (continuation, sleeper) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard !state.isFinished, shouldFinish(&state) else { return (nil, nil) }
            state.isFinished = true
            defer {
                state.continuation = nil
                state.sleeper = nil
                state.wakeAt = nil
            }
            return (state.continuation, state.sleeper)
        }
        sleeper?.cancel()
        continuation?.resume()
    }

    private func drive(driver: Int, from start: Int) async {
        var index = start
        while index < slots.count {
            let slot = slots[index]
            guard slot.isEnabled else {
                guard record(.skipped, at: index, driver: driver) else { return }
                index += 1
                continue
            }
            let application = slot.application
            let hook = self.hook
            let claimed = slot.claimOrEnqueue {
                { _ = try? await hook(slot.service, application) }
            }
            guard claimed else {
                guard record(.deferred, at: index, driver: driver) else { return }
                index += 1
                continue
            }
            guard begin(index, driver: driver) else {
                await slot.release()
                return
            }
            let result: HookResult
            do {
                result = .returned(try await hook(slot.service, application))
            } catch {
                result = .threw(String(describing: error))
            }
            let stillDriving = record(result, at: index, driver: driver)
            await slot.release()
            guard stillDriving else { return }
            index += 1
        }
        finish { $0.driver == driver }
    }

    private func begin(_ index: Int, driver: Int) -> Bool {
        let now = ContinuousClock.now
        let deadline = now + deadlines[index]
        let (began, earlyWake) = state.withLock { state -> (Bool, Task<Void, Never>?) in
            guard state.driver == driver else { return (false, nil) }
            state.index = index
            state.startedAt = now
            // The monitor sleeps past this hook's deadline (an earlier hook had a longer one):
            // wake it so it watches this hook instead.
            guard let wakeAt = state.wakeAt, deadline < wakeAt else { return (true, nil) }
            state.wakeAt = nil
            return (true, state.sleeper)
        }
        earlyWake?.cancel()
        return began
    }

    /// Stores a result; false when this driver was abandoned and must stop.
    private func record(_ result: HookResult, at index: Int, driver: Int) -> Bool {
        state.withLock { state in
            guard state.driver == driver else { return false }
            state.results[index] = result
            state.index = index + 1
            state.startedAt = nil
            return true
        }
    }

    private func monitor() async {
        let clock = ContinuousClock()
        while true {
            let now = clock.now
            enum Step { case finished, sleep(Task<Void, Never>), takeOver(driver: Int, from: Int) }
            let step = state.withLock { state -> Step in
                if state.isFinished { return .finished }
                func sleep(until instant: ContinuousClock.Instant) -> Step {
                    // Unstructured so that `begin` can cut the sleep short by cancelling it.
                    let sleeper = Task { _ = try? await clock.sleep(until: instant) }
                    state.wakeAt = instant
                    state.sleeper = sleeper
                    return .sleep(sleeper)
                }
                let index = min(state.index, slots.count - 1)
                guard let startedAt = state.startedAt else {
                    return sleep(until: now + deadlines[index])
                }
                let deadline = startedAt + deadlines[state.index]
                guard deadline <= now else { return sleep(until: deadline) }
                state.results[state.index] = .overran(deadlines[state.index])
                state.driver += 1
                state.index += 1
                state.startedAt = nil
                return .takeOver(driver: state.driver, from: state.index)
            }
            switch step {
            case .finished:
                return
            case .sleep(let sleeper):
                await sleeper.value
            case .takeOver(let driver, let index):
                // Unstructured for the same reason as the first driver: it may get stuck too.
                Task { await self.drive(driver: driver, from: index) }
            }
        }
    }
}

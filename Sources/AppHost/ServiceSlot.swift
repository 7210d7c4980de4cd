import Logging
import Synchronization

/// One registered service inside the host: the instance, its handle, its health, and the
/// mailbox that keeps its hooks one at a time even after one overran its deadline.
final class ServiceSlot: Sendable {
    typealias Job = @Sendable () async -> Void

    private struct State {
        var health: ServiceHealth
        var application: Application
        var isBusy = false
        var backlog: [Job] = []
        var isStopped = false
        var stopWaiter: CheckedContinuation<Void, Never>?
        var idleWaiters: [IdleWaiter] = []
    }

    let descriptor: ServiceDescriptor
    let service: any ApplicationService
    let hookDeadline: Duration
    let launchDeadline: Duration
    private let state: Mutex<State>
    private let predecessor = Mutex<ServiceSlot?>(nil)

    init(descriptor: ServiceDescriptor, service: any ApplicationService, application: Application, hookDeadline: Duration, launchDeadline: Duration) {
        self.descriptor = descriptor
        self.service = service
        self.hookDeadline = descriptor.deadline ?? hookDeadline
        self.launchDeadline = descriptor.launchDeadline ?? launchDeadline
        self.state = Mutex(State(health: ServiceHealth(name: descriptor.name, isRequired: descriptor.isRequired, condition: .healthy), application: application))
    }

    var name: String { descriptor.name }
    var health: ServiceHealth { state.withLock { $0.health } }
    var isEnabled: Bool { state.withLock { $0.health.isEnabled } }
    var application: Application { state.withLock { $0.application } }

    func disable(reason: String) {
        state.withLock { $0.health.condition = .disabled(reason: reason) }
    }

    func replaceApplication(_ application: Application) {
        state.withLock { $0.application = application }
    }

    func recordOverrun(_ overrun: Overrun) {
        state.withLock { $0.health.lastOverrun = overrun }
    }

    func recordError(_ error: String) {
        state.withLock { $0.health.lastError = error }
    }

    /// Claims the service for an inline hook call, or, while an earlier hook still runs, queues
    /// the job `makeJob` builds to run right after it. Returns true when claimed. The job is only
    /// built when it is queued, so the fast path allocates nothing.
    func claimOrEnqueue(_ makeJob: () -> Job) -> Bool {
        state.withLock { state in
            if state.isBusy {
                state.backlog.append(makeJob())
                return false
            }
            state.isBusy = true
            return true
        }
    }

    /// Releases the claim after a hook returned, first running whatever queued up behind it.
    func release() async {
        while let next = state.withLock({ state -> Job? in
            if state.backlog.isEmpty {
                state.isBusy = false
                return nil
            }
            return state.backlog.removeFirst()
        }) {
            await next()
        }
        let waiters = state.withLock { state -> [IdleWaiter] in
            guard !state.isBusy else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume(true) }
    }

    /// Waits until no hook of the service runs and nothing is queued behind it (so a queued
    /// `willTerminate` has run), or until `timeout` passed. Returns whether it became idle.
    func waitUntilIdle(timeout: Duration) async -> Bool {
        let waiter = IdleWaiter()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            waiter.set(continuation)
            let idle = state.withLock { state -> Bool in
                if !state.isBusy { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if idle {
                waiter.resume(true)
                return
            }
            // Unstructured: the timer must be able to end the wait while the hook still runs.
            waiter.setTimer(Task {
                try? await Task.sleep(for: timeout)
                waiter.resume(false)
            })
        }
    }

    /// Takes over the `run` loop of the slot this one replaces after a live configuration update.
    func adoptRunLoop(of old: ServiceSlot) {
        predecessor.withLock { $0 = old }
    }

    /// Ends the service's `run` loop (it is cancelled) once it was terminated.
    func stop() {
        predecessor.withLock { $0 }?.stop()
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isStopped = true
            defer { state.stopWaiter = nil }
            return state.stopWaiter
        }
        waiter?.resume()
    }

    /// Returns when `stop()` was called.
    func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let stoppedAlready = state.withLock { state in
                if state.isStopped { return true }
                state.stopWaiter = continuation
                return false
            }
            if stoppedAlready { continuation.resume() }
        }
    }
}

/// One `waitUntilIdle` call: resumed once, by the slot going idle or by its timer.
final class IdleWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var timer: Task<Void, Never>?
        var result: Bool?
    }

    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<Bool, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func setTimer(_ timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            if state.result != nil { return true }
            state.timer = timer
            return false
        }
        if finished { timer.cancel() }
    }

    func resume(_ idle: Bool) {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<Bool, Never>?, Task<Void, Never>?) in
            guard state.result == nil else { return (nil, nil) }
            state.result = idle
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        if idle { timer?.cancel() }
        continuation?.resume(returning: idle)
    }
}

import AppHostTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

// The bounded waits for a datagram, a condition or the exit.
extension NotifyRecorder {
    /// The first datagram with index ≥ `after` that satisfies `predicate`, already recorded or yet
    /// to come. Throws with diagnostics after `timeout`, or as soon as the daemon exits without it.
    @discardableResult
    func waitFor(
        _ what: String,
        after: Int = 0,
        timeout: Duration = .seconds(15),
        where predicate: @escaping @Sendable (Datagram) -> Bool
    ) async throws -> Datagram {
        let id = UUID()
        let takeBack: @Sendable () -> CheckedContinuation<Datagram?, Never>? = { [recording] in
            recording.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation
        }
        let found: Datagram? = await awaitResumption(timeout: timeout, takeBack: takeBack) { continuation in
            let immediate: Datagram?? = recording.state.withLock { state in
                if let hit = state.datagrams.dropFirst(after).first(where: predicate) { return .some(hit) }
                if state.exit != nil { return .some(nil) }
                state.waiters[id] = Recording.Waiter(from: after, predicate: predicate, continuation: continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        if let found { return found }
        let reason = exit.map { "the daemon \($0) before" } ?? "timed out after \(timeout) before"
        throw HarnessError("\(reason) a datagram matched: \(what)\n\(diagnostics())")
    }

    /// Polls `condition` (state of another process, such as the probe log or `/proc`) until it
    /// holds; throws with diagnostics after `timeout`, or once the daemon exited without it.
    func waitUntil(_ what: String, timeout: Duration = .seconds(15), _ condition: () throws -> Bool) async throws {
        var exited = false
        let met = try await eventually(timeout: timeout, every: .milliseconds(5)) {
            if try condition() { return true }
            exited = exit != nil
            return exited
        }
        if met && !exited { return }
        let reason = exited ? "the daemon \(exit.map(\.description) ?? "exited") before" : "timed out after \(timeout) waiting until"
        throw HarnessError("\(reason) \(what)\n--- probe log:\n\(probeLog.tail())\n\(diagnostics())")
    }

    /// Waits until the daemon has read `signal` (it is no longer pending): after this, a signal
    /// sent next is read after it whatever its number.
    func waitUntilRead(_ signal: Int32, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("the daemon read \(Self.name(of: signal))", timeout: timeout) {
            !pendingSignals().contains(signal)
        }
    }

    /// Waits for the daemon to exit; throws with diagnostics after `timeout`.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(15)) async throws -> Exit {
        if let exit = await awaitExit(timeout: timeout) { return exit }
        throw HarnessError("the daemon did not exit within \(timeout)\n\(diagnostics())")
    }

    func awaitExit(timeout: Duration) async -> Exit? {
        let id = UUID()
        let takeBack: @Sendable () -> CheckedContinuation<Exit?, Never>? = { [recording] in
            recording.state.withLock { $0.exitWaiters.removeValue(forKey: id) }
        }
        return await awaitResumption(timeout: timeout, takeBack: takeBack) { continuation in
            let done: Exit? = recording.state.withLock { state in
                if let exit = state.exit { return exit }
                state.exitWaiters[id] = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

/// Runs `register`, which either resumes the continuation itself or parks it where another thread
/// will resume it; after `timeout` the parked continuation is taken back with `takeBack` (nil when
/// it was resumed meanwhile) and resumed with nil.
private func awaitResumption<T: Sendable>(
    timeout: Duration,
    takeBack: @escaping @Sendable () -> CheckedContinuation<T?, Never>?,
    _ register: (CheckedContinuation<T?, Never>) -> Void
) async -> T? {
    let timer = TimerBox()
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        register(continuation)
        // Why a detached timer: the continuation is resumed by another thread (the reader or the
        // termination handler); only the timeout comes from here. Started once the continuation
        // is parked, cancelled once it was resumed.
        timer.start {
            try? await Task.sleep(for: timeout)
            if Task.isCancelled { return }
            takeBack()?.resume(returning: nil)
        }
    }
    timer.cancel()
    return value
}

/// The timeout task of one wait.
private final class TimerBox: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { $0 = Task.detached(operation: body) }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }
}

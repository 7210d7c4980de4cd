import CAppHostShims
import Glibc
import Synchronization

/// Reads the lifecycle signals from one `signalfd`, so queued real-time signals all arrive, in order.
///
/// The signals must be blocked in every thread (the daemon's C prelude does that before main);
/// then they stay pending and only this fd consumes them. A dedicated thread sleeps in `poll()` on
/// the signalfd and a wake eventfd: no timer, no busy loop, and `close()` ends it at once.
///
/// The kernel dequeues pending signals lowest number first, so signals that are pending together
/// come out in signal-number order; signals of one number come out in the order they were sent.
public final class SignalSource: Sendable {
    /// The lifecycle signals in delivery order. One consumer; the buffer is unbounded so a queued
    /// real-time storm is never dropped. Ends after `close()`.
    public let signals: AsyncStream<LifecycleSignal>

    /// The kernel thread id of the reader thread. Signals sent to this thread with `tgkill` or
    /// `rt_tgsigqueueinfo` reach the signalfd even while other threads leave them unblocked.
    public let readerThreadID: pid_t

    private let wake: WakeEventFD

    /// Opens the signalfd and starts the reader thread.
    ///
    /// Throws `LifecycleSignalError.notBlocked` when the calling thread does not block every
    /// lifecycle signal: the reader thread inherits this mask, and unblocked signals would take
    /// their default action (terminate) instead of reaching the fd.
    public convenience init() throws(LifecycleSignalError) {
        try self.init(onDelivery: nil)
    }

    /// Like `init()`, and calls `onDelivery` on the reader thread for each signal before it is
    /// yielded, with the sender's pid and the queued value (for logging who asked).
    public init(onDelivery: (@Sendable (SignalDelivery) -> Void)?) throws(LifecycleSignalError) {
        let missing = LifecycleSignalMask.unblockedInCurrentThread
        guard missing.isEmpty else { throw .notBlocked(signals: missing) }
        let signalFD = apphost_open_lifecycle_signalfd()
        guard signalFD >= 0 else { throw .signalfdFailed(errno: errno) }
        let wake: WakeEventFD
        do { wake = try WakeEventFD() } catch {
            Glibc.close(signalFD)
            throw error
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: LifecycleSignal.self, bufferingPolicy: .unbounded)
        // A consumer that stops listening ends the reader too; pending signals stay in the kernel.
        continuation.onTermination = { _ in wake.wake() }

        let started = ThreadStartLatch()
        let result = PollThread.start(name: "apphost-signals") {
            // Inherited from the creator already; repeated so the reader never takes a default action.
            _ = apphost_block_lifecycle_signals()
            started.open(threadID: apphost_gettid())
            Self.readLoop(signalFD: signalFD, wake: wake, continuation: continuation, onDelivery: onDelivery)
        }
        guard result == 0 else {
            Glibc.close(signalFD)
            continuation.finish()
            throw .readerFailed(errno: result)
        }
        self.signals = stream
        self.wake = wake
        self.readerThreadID = started.waitForThreadID()
    }

    /// Stops the reader thread and finishes `signals`. Idempotent. Signals that arrive afterwards
    /// stay pending in the kernel (they are still blocked).
    ///
    /// Reading also stops when the consumer stops iterating (its task is cancelled). Dropping the
    /// source does not stop it, so `try SignalSource().signals` keeps working.
    public func close() { wake.wake() }

    /// Makes a lifecycle signal that the kernel delivers to some other thread reach this source
    /// instead of taking its default action (terminating the process).
    ///
    /// Blocking the signals in every thread is not enough once a library thread waits with a mask
    /// of its own: swift-subprocess's monitor thread (the exec service) sleeps in `epoll_pwait`
    /// with an empty mask, so `kill -USR1` would land there and kill the daemon. This installs a
    /// process-wide handler that re-queues such a signal to the reader thread (sender pid and value
    /// kept, `SI_QUEUE` as code). Call it once, for the process's one source; it stays installed.
    public func forwardSignalsDeliveredToOtherThreads() throws(LifecycleSignalError) {
        let result = apphost_forward_lifecycle_signals(readerThreadID)
        guard result == 0 else { throw .readerFailed(errno: result) }
    }

    private static func readLoop(
        signalFD: Int32,
        wake: WakeEventFD,
        continuation: AsyncStream<LifecycleSignal>.Continuation,
        onDelivery: (@Sendable (SignalDelivery) -> Void)?
    ) {
        defer {
            Glibc.close(signalFD)
            continuation.finish()
        }
        var fds = [
            pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [apphost_signal_info](repeating: apphost_signal_info(), count: 64)
        while true {
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            // Drain everything pending: the fd is non-blocking, 0 means EAGAIN.
            while true {
                let count = buffer.withUnsafeMutableBufferPointer {
                    apphost_read_signals(signalFD, $0.baseAddress, Int32($0.count))
                }
                if count < 0 { return }
                if count == 0 { break }
                for info in buffer[0..<Int(count)] {
                    guard let signal = LifecycleSignal(signalNumber: info.signo) else { continue }
                    onDelivery?(SignalDelivery(
                        signal: signal, senderPID: info.pid, code: info.code, value: info.value))
                    continuation.yield(signal)
                }
            }
        }
    }
}

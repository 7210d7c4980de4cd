import CAppHostShims
import Glibc
import Synchronization

/// Reads the lifecycle signals from one `signalfd`, so queued real-time signals all arrive, in order.
///
/// The signals must be blocked in every thread (the daemon's C prelude does that before main);
/// then they stay pending and only this fd consumes them. A thread sleeps in `poll()` on the
/// signalfd (its own, or a `PollLoop` the daemon shares with memory pressure): no timer, no busy
/// loop, and `close()` ends the reading at once.
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

    private let loop: PollLoop
    private let reader: Reader

    /// Opens the signalfd and starts the reader thread.
    ///
    /// Throws `LifecycleSignalError.notBlocked` when the calling thread does not block every
    /// lifecycle signal: the reader thread inherits this mask, and unblocked signals would take
    /// their default action (terminate) instead of reaching the fd.
    public convenience init() throws(LifecycleSignalError) {
        try self.init(onDelivery: nil, on: nil)
    }

    /// Like `init()`, and calls `onDelivery` on the reader thread for each signal before it is
    /// yielded, with the sender's pid and the queued value (for logging who asked).
    public convenience init(onDelivery: (@Sendable (SignalDelivery) -> Void)?) throws(LifecycleSignalError) {
        try self.init(onDelivery: onDelivery, on: nil)
    }

    /// Like `init(onDelivery:)`, read on `shared`'s thread (which other sources may share), or on
    /// a thread of its own without one.
    package init(onDelivery: (@Sendable (SignalDelivery) -> Void)? = nil, on shared: PollLoop?) throws(LifecycleSignalError) {
        let missing = LifecycleSignalMask.unblockedInCurrentThread
        guard missing.isEmpty else { throw .notBlocked(signals: missing) }
        let loop: PollLoop
        if let shared { loop = shared } else { loop = try PollLoop(name: "apphost-signals") }
        let signalFD = apphost_open_lifecycle_signalfd()
        guard signalFD >= 0 else {
            let code = errno
            if shared == nil { loop.close() }
            throw .signalfdFailed(errno: code)
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: LifecycleSignal.self, bufferingPolicy: .unbounded)
        let reader = Reader(signalFD: signalFD, continuation: continuation, onDelivery: onDelivery, endsLoop: shared == nil ? loop : nil)
        // A consumer that stops listening ends the reader too; pending signals stay in the kernel.
        continuation.onTermination = { _ in loop.remove(reader) }
        loop.add(reader)
        self.signals = stream
        self.loop = loop
        self.reader = reader
        self.readerThreadID = loop.threadID
    }

    /// Stops reading and finishes `signals`. Idempotent. Signals that arrive afterwards stay
    /// pending in the kernel (they are still blocked). A thread of the source's own ends with it.
    ///
    /// Reading also stops when the consumer stops iterating (its task is cancelled). Dropping the
    /// source does not stop it, so `try SignalSource().signals` keeps working.
    public func close() { loop.remove(reader) }

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

    /// The signalfd's client of the loop; touched only on the loop's thread.
    private final class Reader: PollClient, @unchecked Sendable {
        let signalFD: Int32
        let continuation: AsyncStream<LifecycleSignal>.Continuation
        let onDelivery: (@Sendable (SignalDelivery) -> Void)?
        /// A source's own loop ends with its reader.
        let endsLoop: PollLoop?
        var buffer = [apphost_signal_info](repeating: apphost_signal_info(), count: 64)

        init(signalFD: Int32, continuation: AsyncStream<LifecycleSignal>.Continuation, onDelivery: (@Sendable (SignalDelivery) -> Void)?, endsLoop: PollLoop?) {
            self.signalFD = signalFD
            self.continuation = continuation
            self.onDelivery = onDelivery
            self.endsLoop = endsLoop
        }

        func descriptors() -> [pollfd] { [pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0)] }

        func handle(_ revents: [Int16]) -> Bool {
            // Drain everything pending: the fd is non-blocking, 0 means EAGAIN.
            while true {
                let count = buffer.withUnsafeMutableBufferPointer {
                    apphost_read_signals(signalFD, $0.baseAddress, Int32($0.count))
                }
                if count < 0 { return false }
                if count == 0 { return true }
                for info in buffer[0..<Int(count)] {
                    guard let signal = LifecycleSignal(signalNumber: info.signo) else { continue }
                    onDelivery?(SignalDelivery(
                        signal: signal, senderPID: info.pid, code: info.code, value: info.value))
                    continuation.yield(signal)
                }
            }
        }

        func finish() {
            Glibc.close(signalFD)
            continuation.finish()
            endsLoop?.close()
        }
    }
}

import CAppHostShims
import CSystemd
import Glibc
import Synchronization

/// Reads the lifecycle signals with sd-event's signal sources (`sd_event_add_signal`), which read
/// the signalfd one `signalfd_siginfo` at a time, so queued real-time signals all arrive, in order.
///
/// The signals must be blocked in every thread (the daemon's C prelude does that before main);
/// then they stay pending and only the event loop's signalfd consumes them. The loop (its own, or
/// the `EdgeEventLoop` the daemon shares with memory pressure) sleeps with no timer, and
/// `close()` ends the reading at once.
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

    private let loop: EdgeEventLoop
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
    package init(onDelivery: (@Sendable (SignalDelivery) -> Void)? = nil, on shared: EdgeEventLoop?) throws(LifecycleSignalError) {
        let missing = LifecycleSignalMask.unblockedInCurrentThread
        guard missing.isEmpty else { throw .notBlocked(signals: missing) }
        let loop: EdgeEventLoop
        if let shared {
            loop = shared
        } else {
            do {
                loop = try EdgeEventLoop(name: "apphost-signals")
            } catch {
                throw .readerFailed(errno: error.code)
            }
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: LifecycleSignal.self, bufferingPolicy: .unbounded)
        let reader = Reader(continuation: continuation, onDelivery: onDelivery, endsLoop: shared == nil ? loop : nil)
        // A consumer that stops listening ends the reader too; pending signals stay in the kernel.
        continuation.onTermination = { _ in loop.remove(reader) }
        do {
            try loop.add(reader)
        } catch {
            throw .signalSourceFailed(errno: error.rawValue)
        }
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

    /// The signal sources' client of the loop; touched only on the loop's thread.
    private final class Reader: EdgeEventClient, @unchecked Sendable {
        let continuation: AsyncStream<LifecycleSignal>.Continuation
        let onDelivery: (@Sendable (SignalDelivery) -> Void)?
        /// A source's own loop ends with its reader.
        let endsLoop: EdgeEventLoop?
        var sources: [OpaquePointer] = []

        init(continuation: AsyncStream<LifecycleSignal>.Continuation, onDelivery: (@Sendable (SignalDelivery) -> Void)?, endsLoop: EdgeEventLoop?) {
            self.continuation = continuation
            self.onDelivery = onDelivery
            self.endsLoop = endsLoop
        }

        /// One signal source per lifecycle signal; sd-event reads them from one signalfd, so
        /// signals pending together come out as the kernel dequeues them.
        func attach(to event: OpaquePointer) -> Int32 {
            let context = Unmanaged.passUnretained(self).toOpaque()
            for number in LifecycleSignal.allSignalNumbers {
                var source: OpaquePointer?
                let added = sd_event_add_signal(event, &source, number, { _, info, userdata in
                    guard let info else { return 0 }
                    Unmanaged<Reader>.fromOpaque(userdata!).takeUnretainedValue().deliver(info.pointee)
                    return 0
                }, context)
                guard added >= 0, let source else { return -added }
                sources.append(source)
            }
            return 0
        }

        func deliver(_ info: signalfd_siginfo) {
            guard let signal = LifecycleSignal(signalNumber: Int32(info.ssi_signo)) else { return }
            onDelivery?(SignalDelivery(signal: signal, senderPID: info.ssi_pid, code: info.ssi_code, value: info.ssi_int))
            continuation.yield(signal)
        }

        func finish() {
            for source in sources { sd_event_source_disable_unref(source) }
            sources = []
            continuation.finish()
            endsLoop?.close()
        }
    }
}

import CAppHostShims
import CSystemd
import Dispatch
import Glibc
import Synchronization
import SystemPackage

/// What runs on an `EdgeEventLoop`: one source of the edge (the signals, memory pressure) with
/// its sd-event sources. The loop calls both methods on its own thread, one at a time, so a
/// client's state needs no lock of its own.
package protocol EdgeEventClient: AnyObject, Sendable {
    /// Adds the client's sources to `event`. Returns 0, or the errno of what failed; the loop
    /// then finishes it.
    func attach(to event: OpaquePointer) -> Int32
    /// The client has left the loop (its own `remove`, or the loop closing): it drops its
    /// sources, closes its descriptors and finishes its stream. Called once.
    func finish()
}

/// The edge's one event loop: an sd-event loop on a thread of its own, with no timer, asleep in
/// `sd_event_run` until a signal, a memory-pressure fd or a request from Swift wakes it.
///
/// sd-event objects belong to one thread, so everything that touches them runs here: Swift tasks
/// hand work in through a queue and an eventfd (`add`, `remove`, `close`). The thread inherits the
/// blocked lifecycle signals, which `sd_event_add_signal` requires of the thread that reads them.
package final class EdgeEventLoop: Sendable {
    /// The kernel thread id of the loop's thread: where stray lifecycle signals are forwarded.
    package let threadID: pid_t
    private let shared: Shared

    /// Starts the thread, named `name` (15 characters at most are kept), and its sd-event loop.
    package init(name: String) throws(EdgeEventLoopError) {
        let shared = Shared(wake: try EdgeEventWakeup())
        let started = ThreadHandoff<pid_t>()
        let failure = Mutex<Int32>(0)
        let result = EdgeEventThread.start(name: name) {
            // Inherited from a daemon's threads already; repeated so that a signal never takes
            // its default action here.
            _ = apphost_block_lifecycle_signals()
            var event: OpaquePointer?
            let created = sd_event_new(&event)
            guard created >= 0, let event else {
                failure.withLock { $0 = -created }
                started.hand(apphost_gettid())
                return
            }
            let context = Unmanaged.passUnretained(shared).toOpaque()
            let woken = sd_event_add_io(event, nil, shared.wake.fd, UInt32(EPOLLIN.rawValue), { _, _, _, userdata in
                Unmanaged<Shared>.fromOpaque(userdata!).takeUnretainedValue().takeWork()
                return 0
            }, context)
            guard woken >= 0 else {
                sd_event_unref(event)
                failure.withLock { $0 = -woken }
                started.hand(apphost_gettid())
                return
            }
            shared.event = event
            started.hand(apphost_gettid())
            let ended = sd_event_loop(event)
            // Ended by `close()`, or on its own (an epoll or signalfd failure): either way nothing
            // is left waiting on it, and what comes later is refused.
            shared.end(code: ended < 0 ? -ended : 0)
            shared.event = nil
            sd_event_unref(event)
            shared.ended.signal()
        }
        guard result == 0 else { throw EdgeEventLoopError(operation: "pthread_create", code: result) }
        self.threadID = started.wait()
        let code = failure.withLock { $0 }
        guard code == 0 else { throw EdgeEventLoopError(operation: "sd_event_new", code: code) }
        self.shared = shared
    }

    /// Adds `client` and waits (microseconds) until it attached on the loop's thread. Never
    /// call it from that thread.
    /// - Throws: the errno of its failed attach (the client is then finished); `EBADF` on a
    ///   closed loop.
    package func add(_ client: any EdgeEventClient) throws(Errno) {
        let reply = ThreadHandoff<Int32>()
        guard shared.enqueue(.add(client, reply)) else {
            client.finish()
            throw Errno(rawValue: EBADF)
        }
        let code = reply.wait()
        if code != 0 { throw Errno(rawValue: code) }
    }

    /// Runs `work` on the loop's thread with what the loop's clients share there, and waits
    /// (microseconds) for its errno: how the daemon's edges find and share one bus connection.
    /// Never call it from that thread.
    /// - Throws: `work`'s errno; `EBADF` on a closed loop (`work` then does not run).
    package func withLocal(_ work: @escaping @Sendable (Local) -> Int32) throws(Errno) {
        let reply = ThreadHandoff<Int32>()
        guard shared.enqueue(.local(work, reply)) else { throw Errno(rawValue: EBADF) }
        let code = reply.wait()
        if code != 0 { throw Errno(rawValue: code) }
    }

    /// The loop's own side, touched on its thread only (`withLocal`).
    package final class Local: @unchecked Sendable {
        /// What the loop's clients share, by key: one bus connection per bus.
        package var shared: [String: AnyObject] = [:]
        fileprivate var attach: (any EdgeEventClient) -> Int32 = { _ in EBADF }

        /// Adds `client` at once: 0, or the errno of its attach (it is then finished).
        package func add(_ client: any EdgeEventClient) -> Int32 {
            attach(client)
        }
    }

    /// Takes `client` out; the loop's thread finishes it. Idempotent.
    package func remove(_ client: any EdgeEventClient) {
        _ = shared.enqueue(.remove(ObjectIdentifier(client)))
    }

    /// Runs `work` on the loop's thread, after what was queued before it: how an answer that
    /// Swift computed reaches an sd-bus connection. Dropped once the loop is closed.
    package func perform(_ work: @escaping @Sendable () -> Void) {
        _ = shared.enqueue(.perform(work))
    }

    /// Ends the loop and its thread; every client still on it is finished. Idempotent. Returns
    /// at once (a client's `finish` may close its own loop, on the loop's thread).
    package func close() {
        _ = shared.enqueue(.close)
    }

    /// Waits until the loop has ended and finished every client (for tests, and for a caller
    /// that must know the sources are gone). Never call it from the loop's thread. Returns the
    /// errno that ended the loop on its own, or 0 after `close()`.
    @discardableResult
    package func waitUntilEnded() -> Int32 {
        shared.ended.wait()
        shared.ended.signal()
        return shared.endCode
    }

    /// What the loop's thread and the callers share: the queue of work and the wake fd; and,
    /// touched on the loop's thread only, the sd-event loop and its clients.
    private final class Shared: @unchecked Sendable {
        enum Work {
            case add(any EdgeEventClient, ThreadHandoff<Int32>)
            case remove(ObjectIdentifier)
            case perform(@Sendable () -> Void)
            case local(@Sendable (Local) -> Int32, ThreadHandoff<Int32>)
            case close
        }

        struct Queue {
            var work: [Work] = []
            var isClosed = false
        }

        let queue = Mutex(Queue())
        let wake: EdgeEventWakeup
        let local = Local()
        /// Signalled once the loop has ended.
        let ended = DispatchSemaphore(value: 0)
        /// Loop thread only.
        var event: OpaquePointer?
        var clients: [ObjectIdentifier: any EdgeEventClient] = [:]
        /// Set on the loop's thread before `ended` is signalled.
        var endCode: Int32 = 0

        init(wake: EdgeEventWakeup) {
            self.wake = wake
            local.attach = { [unowned self] in self.attach($0) }
        }

        /// Queues `work` and wakes the loop; false when the loop is closed (`close` is then a
        /// no-op).
        func enqueue(_ work: Work) -> Bool {
            let queued = queue.withLock { queue -> Bool in
                guard !queue.isClosed else { return false }
                queue.work.append(work)
                if case .close = work { queue.isClosed = true }
                return true
            }
            if queued { wake.wake() }
            return queued
        }

        /// On the loop's thread, once the loop has ended: refuses what comes later, answers what
        /// is still queued (an add is refused with `code`, or EBADF), and finishes every client.
        func end(code: Int32) {
            endCode = code
            let pending = queue.withLock { queue in
                queue.isClosed = true
                defer { queue.work = [] }
                return queue.work
            }
            for item in pending {
                switch item {
                case .add(let client, let reply):
                    client.finish()
                    reply.hand(code == 0 ? EBADF : code)
                case .local(_, let reply):
                    reply.hand(code == 0 ? EBADF : code)
                case .remove, .perform, .close: break
                }
            }
            let rest = clients.values
            clients = [:]
            local.shared = [:]
            rest.forEach { $0.finish() }
        }

        /// On the loop's thread: adds `client`, or finishes it when its attach fails.
        func attach(_ client: any EdgeEventClient) -> Int32 {
            guard let event else {
                client.finish()
                return EBADF
            }
            let code = client.attach(to: event)
            if code == 0 {
                clients[ObjectIdentifier(client)] = client
            } else {
                client.finish()
            }
            return code
        }

        /// On the loop's thread: what the callers queued, in order.
        func takeWork() {
            wake.drain()
            let work = queue.withLock { queue in
                defer { queue.work = [] }
                return queue.work
            }
            guard let event else { return }
            for item in work {
                switch item {
                case .add(let client, let reply):
                    reply.hand(attach(client))
                case .local(let work, let reply):
                    reply.hand(work(local))
                case .remove(let id):
                    clients.removeValue(forKey: id)?.finish()
                case .perform(let work):
                    work()
                case .close:
                    // The clients are finished as the loop ends (`end`).
                    sd_event_exit(event, 0)
                    return
                }
            }
        }
    }
}

import CAppHostShims
import Glibc
import Synchronization

/// What a `PollLoop` waits on for one source, and what the source does when its descriptors
/// wake. The loop calls every method on its own thread, one at a time, so a client's state
/// needs no lock of its own.
package protocol PollClient: AnyObject, Sendable {
    /// The descriptors to wait on now, with their events.
    func descriptors() -> [pollfd]
    /// Handles what `poll()` reported for `descriptors()`, in their order; false ends the client.
    func handle(_ revents: [Int16]) -> Bool
    /// The client has left the loop (its own `remove`, `handle` returning false, or the loop
    /// closing): it closes its descriptors and finishes its stream. Called once.
    func finish()
}

/// One thread, asleep in `poll()` without a timeout on the descriptors of every client added to
/// it, so that the daemon's signal reader and memory-pressure watcher share one thread (each
/// costs a stack, a malloc arena and a start). Signals are blocked on it, so it can be the
/// signal reader's thread. `close()` ends it at once.
package final class PollLoop: Sendable {
    /// The kernel thread id of the loop's thread.
    package let threadID: pid_t
    private let shared: Shared

    /// Starts the thread, named `name` (15 characters at most are kept).
    package init(name: String) throws(LifecycleSignalError) {
        let shared = Shared(wake: try WakeEventFD())
        let started = ThreadStartLatch()
        let result = PollThread.start(name: name) {
            // Inherited from a daemon's threads already; repeated so that a signal never takes
            // its default action here.
            _ = apphost_block_lifecycle_signals()
            started.open(threadID: apphost_gettid())
            shared.run()
        }
        guard result == 0 else { throw .readerFailed(errno: result) }
        self.shared = shared
        self.threadID = started.waitForThreadID()
    }

    /// Adds `client`; its descriptors are waited on from the loop's next turn. On a closed
    /// loop the client is finished at once.
    package func add(_ client: any PollClient) {
        let added = shared.registry.withLock { registry -> Bool in
            guard !registry.isClosed else { return false }
            registry.clients[ObjectIdentifier(client)] = client
            return true
        }
        guard added else { return client.finish() }
        shared.wake.wake()
    }

    /// Takes `client` out; the loop's thread finishes it. Idempotent.
    package func remove(_ client: any PollClient) {
        shared.registry.withLock { registry in
            if let gone = registry.clients.removeValue(forKey: ObjectIdentifier(client)) { registry.leaving.append(gone) }
        }
        shared.wake.wake()
    }

    /// Ends the thread; every client still in it is finished. Idempotent.
    package func close() {
        shared.registry.withLock { $0.isClosed = true }
        shared.wake.wake()
    }

    /// What the loop's thread and the callers share: the clients and the wake fd.
    private final class Shared: Sendable {
        struct Registry {
            var clients: [ObjectIdentifier: any PollClient] = [:]
            var leaving: [any PollClient] = []
            var isClosed = false
        }

        let registry = Mutex(Registry())
        let wake: WakeEventFD

        init(wake: WakeEventFD) {
            self.wake = wake
        }

        /// The loop, on its thread, until `close()`.
        func run() {
            while true {
                let (clients, leaving, isClosed) = registry.withLock { registry in
                    defer { registry.leaving = [] }
                    return (Array(registry.clients.values), registry.leaving, registry.isClosed)
                }
                leaving.forEach { $0.finish() }
                if isClosed {
                    // Clients and those a `remove` sent off meanwhile, taken under one lock.
                    let rest = registry.withLock { registry in
                        defer {
                            registry.clients = [:]
                            registry.leaving = []
                        }
                        return registry.leaving + Array(registry.clients.values)
                    }
                    rest.forEach { $0.finish() }
                    return
                }
                var fds: [pollfd] = []
                var ranges: [Range<Int>] = []
                for client in clients {
                    let start = fds.count
                    fds.append(contentsOf: client.descriptors())
                    ranges.append(start..<fds.count)
                }
                fds.append(pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0))
                if poll(&fds, nfds_t(fds.count), -1) < 0 {
                    // A failure other than an interruption would come back at once: end, as
                    // each source's own loop did, rather than spin.
                    if errno != EINTR { registry.withLock { $0.isClosed = true } }
                    continue
                }
                if fds[fds.count - 1].revents != 0 { wake.drain() }
                for (client, range) in zip(clients, ranges) {
                    let revents = fds[range].map(\.revents)
                    guard revents.contains(where: { $0 != 0 }) else { continue }
                    // A client removed meanwhile, or on a loop closed meanwhile, gets nothing
                    // more: what is pending for it stays in the kernel (a signal stays pending, as
                    // it is blocked).
                    guard registry.withLock({ !$0.isClosed && $0.clients[ObjectIdentifier(client)] != nil }) else { continue }
                    if !client.handle(revents) {
                        let gone = registry.withLock { $0.clients.removeValue(forKey: ObjectIdentifier(client)) }
                        gone?.finish()
                    }
                }
            }
        }
    }
}

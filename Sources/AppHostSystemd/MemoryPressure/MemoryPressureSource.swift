import AppHost
import AppHostSupport
import CSystemd
import Glibc
import Logging

/// Memory pressure events under systemd's memory pressure protocol, without any timer.
///
/// With `$MEMORY_PRESSURE_WATCH` (and base64 `$MEMORY_PRESSURE_WRITE`): a PSI file gets the
/// trigger written and is waited on for POLLPRI; a FIFO or character device is waited on for
/// POLLIN and drained; an AF_UNIX socket is connected and waited on for POLLIN; `/dev/null` or an
/// empty value turns watching off. These events are warnings. Without the variables: the own
/// cgroup v2 `memory.pressure`, else `/proc/pressure/memory`, with one PSI trigger per level
/// (see `Thresholds`). systemd 252 cannot set the variables itself, so the fallback matters.
/// Where nothing can be opened the reason is logged once and `events` never yields.
public final class MemoryPressureSource: Sendable {
    /// What is being watched, for logs and `apphostd` status output, e.g.
    /// "MEMORY_PRESSURE_WATCH=/run/x (fifo)", "/proc/pressure/memory (PSI: ...)", "off: ...".
    public let sourceDescription: String

    /// Pressure events, one per kernel notification or per burst of FIFO/socket writes. One
    /// consumer; a slow consumer sees the newest 16. Ends after `close()`.
    public let events: AsyncStream<MemoryWarningLevel>

    /// Whether a source is open (false when off).
    public let isWatching: Bool

    private let continuation: AsyncStream<MemoryWarningLevel>.Continuation

    /// Chooses and opens the source and starts its poll thread.
    public convenience init(
        environment: [String: String] = AppHostSupport.ProcessEnvironment.current,
        thresholds: Thresholds = .default,
        logger: Logger
    ) {
        self.init(environment: environment, thresholds: thresholds, logger: logger, on: nil)
    }

    /// Like `init(environment:thresholds:logger:)`, watched on `shared`'s thread (which other
    /// sources may share), or on a thread of its own without one.
    package convenience init(environment: [String: String], thresholds: Thresholds = .default, logger: Logger, on shared: EdgeEventLoop?) {
        self.init(resolution: Self.resolve(environment: environment, thresholds: thresholds), logger: logger, on: shared)
    }

    /// Watches what `resolution` chose (tests give endpoints of their own).
    init(resolution chosen: Resolution, logger: Logger, on shared: EdgeEventLoop?) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: MemoryWarningLevel.self, bufferingPolicy: .bufferingNewest(16))
        self.events = stream
        self.continuation = continuation

        var resolution = chosen
        if case .watching(let endpoints, _) = resolution {
            do throws(EdgeEventLoopError) {
                let loop: EdgeEventLoop
                if let shared { loop = shared } else { loop = try EdgeEventLoop(name: "apphost-mempress") }
                let watcher = Watcher(endpoints: endpoints, continuation: continuation, logger: logger, endsLoop: shared == nil ? loop : nil)
                // Finishing `events` (a consumer that stops listening, or `close()`) ends the
                // watching, and a thread of the source's own with it.
                continuation.onTermination = { _ in loop.remove(watcher) }
                do {
                    try loop.add(watcher)
                } catch {
                    let paths = endpoints.map(\.path).joined(separator: ", ")
                    resolution = .off(reason: error == .notPermitted
                        ? "\(paths) cannot be waited on (epoll refuses it: not a FIFO, socket, PSI file or pollable device)"
                        : "could not watch \(paths): \(SystemErrorText.describe(error.rawValue))", expected: false)
                }
            } catch {
                endpoints.forEach { Glibc.close($0.fd) }
                resolution = .off(reason: "\(error)", expected: false)
            }
        }
        switch resolution {
        case .watching(_, let description):
            sourceDescription = description
            isWatching = true
            logger.debug("memory pressure: watching \(description)")
        case .off(let reason, let expected):
            sourceDescription = "off: \(reason)"
            isWatching = false
            if expected {
                logger.info("memory pressure: not watching: \(reason)")
            } else {
                logger.warning("memory pressure: not watching, no memory warnings will be delivered: \(reason)")
            }
        }
    }

    /// Stops the watcher and finishes `events`. Idempotent. Watching also stops when the consumer
    /// stops iterating; dropping the source does not stop it, so `MemoryPressureSource(...).events`
    /// keeps working.
    public func close() {
        continuation.finish()
    }

    /// The endpoints' client of the loop: one sd-event I/O source per endpoint (`EPOLLPRI` for a
    /// PSI trigger, `EPOLLIN` for the rest); touched only on the loop's thread.
    private final class Watcher: EdgeEventClient, @unchecked Sendable {
        /// One endpoint and its source.
        final class Watched {
            var endpoint: MemoryPressureEndpoint
            var source: OpaquePointer?
            unowned let watcher: Watcher

            init(endpoint: MemoryPressureEndpoint, watcher: Watcher) {
                self.endpoint = endpoint
                self.watcher = watcher
            }
        }

        var watched: [Watched] = []
        let continuation: AsyncStream<MemoryWarningLevel>.Continuation
        let logger: Logger
        /// A source's own loop ends with its watcher.
        let endsLoop: EdgeEventLoop?

        init(endpoints: [MemoryPressureEndpoint], continuation: AsyncStream<MemoryWarningLevel>.Continuation, logger: Logger, endsLoop: EdgeEventLoop?) {
            self.continuation = continuation
            self.logger = logger
            self.endsLoop = endsLoop
            self.watched = endpoints.map { Watched(endpoint: $0, watcher: self) }
        }

        /// Adds every endpoint's source; one that epoll refuses is dropped and said, the rest are
        /// watched. Fails only when none is left.
        func attach(to event: OpaquePointer) -> Int32 {
            var lastFailure: Int32 = 0
            for entry in watched {
                let added = add(entry, to: event)
                if added < 0 {
                    lastFailure = -added
                    if watched.count > 1 {
                        logger.warning("memory pressure: cannot watch \(entry.endpoint.path): \(SystemErrorText.describe(-added))")
                    }
                    drop(entry)
                }
            }
            return watched.isEmpty ? (lastFailure == 0 ? EINVAL : lastFailure) : 0
        }

        /// One I/O source for `entry` on `event`: 0 or a negative errno.
        func add(_ entry: Watched, to event: OpaquePointer) -> Int32 {
            let context = Unmanaged.passUnretained(entry).toOpaque()
            return sd_event_add_io(event, &entry.source, entry.endpoint.fd, UInt32(UInt16(bitPattern: entry.endpoint.pollEvents)), { _, _, revents, userdata in
                let entry = Unmanaged<Watched>.fromOpaque(userdata!).takeUnretainedValue()
                entry.watcher.handle(entry, revents: revents)
                return 0
            }, context)
        }

        /// What epoll reported for one endpoint (the same bits as `poll`'s).
        func handle(_ entry: Watched, revents: UInt32) {
            let revents = Int32(bitPattern: revents)
            let trouble = revents & (Int32(POLLERR) | Int32(POLLNVAL)) != 0
            let path = entry.endpoint.path
            switch entry.endpoint.kind {
            case .psi:
                if trouble {
                    logger.warning("memory pressure: \(path) stopped reporting (cgroup removed?)")
                    drop(entry)
                } else if revents & Int32(POLLPRI) != 0 {
                    continuation.yield(entry.endpoint.level)
                }
            case .fifo, .characterDevice, .socket:
                let (gotData, endOfFile, isFlooding) = entry.endpoint.drain()
                if isFlooding {
                    logger.warning("memory pressure: \(path) is always readable (a device like /dev/zero, not a pressure source); not watching it")
                    drop(entry)
                    return
                }
                if gotData { continuation.yield(entry.endpoint.level) }
                let hungUp = endOfFile || revents & Int32(POLLHUP) != 0 || trouble
                guard hungUp else { return }
                if entry.endpoint.kind == .fifo && !trouble, let source = entry.source, let event = sd_event_source_get_event(source) {
                    // A read-only FIFO whose writer left: reopen so the next writer is heard. The
                    // close took the old fd out of epoll, and the new one likely has its number:
                    // a new source, not `sd_event_source_set_io_fd` (a no-op for the same number).
                    sd_event_source_disable_unref(source)
                    entry.source = nil
                    if !entry.endpoint.reopen() {
                        logger.warning("memory pressure: cannot reopen \(path): \(SystemErrorText.describe(errno))")
                        drop(entry)
                    } else if add(entry, to: event) < 0 {
                        logger.warning("memory pressure: cannot watch \(path) again after reopening it")
                        drop(entry)
                    }
                } else {
                    logger.warning("memory pressure: \(path) closed, no more events from it")
                    drop(entry)
                }
            }
        }

        /// Stops watching `entry` and closes its fd.
        func drop(_ entry: Watched) {
            if let source = entry.source { sd_event_source_disable_unref(source) }
            entry.source = nil
            if entry.endpoint.fd >= 0 { Glibc.close(entry.endpoint.fd) }
            entry.endpoint.fd = -1
            watched.removeAll { $0 === entry }
        }

        func finish() {
            watched.forEach(drop)
            continuation.finish()
            endsLoop?.close()
        }
    }
}

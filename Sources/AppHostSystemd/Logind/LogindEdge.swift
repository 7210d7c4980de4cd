import AppHost
import AppHostSupport
import Glibc
import Logging
import ServiceLifecycle

/// The machine's lifecycle from systemd-logind, through sd-bus on the system bus (where logind
/// is, also for a user's daemon): before the machine sleeps or shuts down, every service goes to
/// the background and the restorable state to disk, and only then may logind go on. Run it in
/// the daemon's `ServiceGroup`.
///
/// It takes a `delay` inhibitor for `sleep` and one for `shutdown` (`systemd-inhibit --list`
/// shows them under the daemon's name). On `PrepareForSleep(true)` it makes one request with
/// cause `sleep` (`PluggableApplicationHost.prepareForMachineSleep(_:)`: background unless
/// already there; it answers once the restorable state is on disk), then closes the
/// inhibitor's fd. It never holds logind longer than a margin before `InhibitDelayMaxUSec`:
/// past that it releases the inhibitor anyway and names the service still inside a hook. On
/// `PrepareForSleep(false)` it asks the host to resume (`machineDidResume(from:)`, cause
/// `resume`): where the host returns is the host's state machine's, kept in order with the other
/// requests, and a new inhibitor is taken. `PrepareForShutdown(true)` gets the same saving
/// request with cause `shutdown`; the SIGTERM that follows terminates as ever, and
/// `PrepareForShutdown(false)` (the shutdown did not happen) is handled as a resume. Should the
/// bus or logind go away before the resume, the sleep ends then.
///
/// Without a system bus, without logind, or when polkit refuses the inhibitors, it says so once,
/// with what to install, and the daemon runs on: the signals work as ever. When logind appears
/// later (the daemon started before it), the inhibitors are taken then.
public struct LogindEdge: Service {
    /// The inhibitors' "who": the daemon's name.
    public let who: String
    let host: PluggableApplicationHost
    let logger: Logger
    let loop: EdgeEventLoop?
    /// Whose screen lock is followed; nil: none.
    let session: WatchedSession?
    /// Where logind is: the system bus, but for tests.
    let bus: DBusAddress
    /// How the session to follow is found: sd-login, but for tests.
    let sessionLookup: LoginSessionLookup

    /// Follows logind for `host`, on an event loop of its own. The sleep's request answers once
    /// the restorable state is on disk (the host's storage's `persistDurably(_:)`).
    /// `session`: whose screen lock the session-lock service follows (`ScreenLockDidChange`);
    /// nil: none.
    public init(host: PluggableApplicationHost, who: String, logger: Logger, session: WatchedSession? = .auto) {
        self.init(host: host, who: who, logger: logger, on: nil, session: session)
    }

    /// Like `init(host:who:logger:session:)`, on `loop` (the daemon's edge loop). `AfterLaunch`
    /// keeps it off the way to `READY=1`.
    package init(
        host: PluggableApplicationHost, who: String, logger: Logger, on loop: EdgeEventLoop?,
        session: WatchedSession? = .auto, bus: DBusAddress = .system, sessionLookup: LoginSessionLookup = .sdLogin
    ) {
        self.sessionLookup = sessionLookup
        self.session = session
        self.bus = bus
        self.host = host
        self.who = who
        self.logger = logger
        self.loop = loop
    }

    /// Follows logind until graceful shutdown or cancellation. Asleep on the event loop between
    /// logind's signals: no timer but the release deadline while logind waits.
    public func run() async {
        let loop: EdgeEventLoop
        let ownLoop: Bool
        if let shared = self.loop {
            (loop, ownLoop) = (shared, false)
        } else {
            do {
                (loop, ownLoop) = (try EdgeEventLoop(name: "apphost-logind"), true)
            } catch {
                logger.notice("logind not followed (\(error)): sleep and shutdown reach the services only by signal")
                return
            }
        }
        let (events, sink) = AsyncStream<LogindClient.Event>.makeStream()
        let metrics = LogindMetrics(factory: host.metricsFactory)
        let client = LogindClient(who: who, watching: session, sessionLookup: sessionLookup, events: sink) { [host, logger] what, waited in
            metrics.recordRelease(what, after: waited)
            Self.reportDeadline(what, waited: waited, host: host, logger: logger)
        }
        let member = DBusConnection.Member(setUp: client.setUp, onEvent: client.connectionChanged, leave: { _ in client.leave() })
        client.member = member
        let connection: DBusConnection
        do {
            // The daemon's connection when its bus name is on the system bus too: one per daemon.
            connection = try DBusConnection.join(bus, member: member, on: loop, endsLoop: ownLoop)
        } catch {
            logger.notice("logind not followed: no system bus (sd_bus_open_system: \(SystemErrorText.reason(error.rawValue))); sleep and shutdown reach the services only by signal")
            sink.finish()
            return
        }
        let stop: @Sendable () -> Void = {
            // The connection stays while the bus name is on it; the last to leave closes it.
            loop.perform {
                client.finish()
                connection.leave(member)
            }
            // Also when the loop is closed already and drops the work above.
            sink.finish()
        }
        await withTaskCancellationOrGracefulShutdownHandler {
            await follow(events, client: client, loop: loop, metrics: metrics)
        } onCancelOrGracefulShutdown: {
            stop()
        }
    }

    private func follow(_ events: AsyncStream<LogindClient.Event>, client: LogindClient, loop: EdgeEventLoop, metrics: LogindMetrics) async {
        var state = FollowState()
        for await event in events {
            switch take(event, &state, metrics: metrics) {
            case .prepare(let what, let number):
                await prepare(what, number: number, client: client, loop: loop, metrics: metrics)
            case .resume(let what, let saying):
                await resume(after: what, saying: saying)
            case nil:
                continue
            }
        }
    }

    /// The saving request, then the inhibitor's release.
    private func prepare(_ what: LogindClient.Inhibition, number: Int, client: LogindClient, loop: EdgeEventLoop, metrics: LogindMetrics) async {
        let clock = ContinuousClock()
        let began = clock.now
        let cause = what.rawValue
        logger.notice("the machine is about to \(what == .sleep ? "sleep" : "shut down"): services to the background, state to disk", metadata: ["cause": "\(cause)"])
        do {
            try await host.prepareForMachineSleep(what == .sleep ? .sleep : .shutdown)
        } catch {
            // Terminating already: the terminate saves.
            logger.notice("\(cause): \(error)", metadata: ["cause": "\(cause)"])
        }
        let ready = clock.now
        // Said before the release: logind goes on at once after it. The request answered once
        // the state was on disk.
        logger.info(
            "ready for \(cause) after \((ready - began).configText) (the services in the background, the state on disk); logind may go on",
            metadata: ["cause": "\(cause)", "request_us": "\((ready - began).microseconds)"]
        )
        loop.perform { [logger] in
            guard let waited = client.release(what, preparation: number) else { return }
            metrics.recordRelease(what, after: waited)
            logger.debug("\(cause) inhibitor released \(waited.configText) after logind's PrepareFor…", metadata: ["cause": "\(cause)", "release_us": "\(waited.microseconds)"])
        }
    }

    /// After the sleep (or a shutdown that did not happen; `saying` false: the bus went away, and
    /// logind's word will not come): the machine returns the host where it belongs, as the
    /// requests since the preparation left it. Nothing happens without a preparation.
    private func resume(after what: LogindClient.Inhibition, saying: Bool) async {
        if saying {
            logger.notice(what == .sleep ? "the machine is awake again" : "the shutdown did not happen", metadata: ["cause": "resume"])
        }
        do {
            try await host.machineDidResume(from: what == .sleep ? .sleep : .shutdown)
        } catch {
            logger.notice("resume: \(error)", metadata: ["cause": "resume"])
        }
    }

    /// On the loop's thread, when logind's wait ran out before the services were ready.
    static func reportDeadline(_ what: LogindClient.Inhibition, waited: Duration, host: PluggableApplicationHost, logger: Logger) {
        let inside = host.hookInProgress.map { " \($0.service) is still inside \($0.hook) (for \((ContinuousClock.now - $0.since).configText))" } ?? ""
        logger.warning(
            "released the \(what.rawValue) inhibitor after \(waited.configText), before logind's limit:\(inside.isEmpty ? " the services were not ready" : inside)",
            metadata: ["cause": "\(what.rawValue)"]
        )
    }
}

import AppHost
import Logging

/// A host for tests: a real `PluggableApplicationHost` running in process, with every hook call
/// and every report recorded in order and awaitable. Get one from `withTestHost(_:_:)`.
///
/// Drive it with the host's own requests (`enterBackground()`, `receiveMemoryWarning(level:)`,
/// `setSessionLocked(_:)`, `reload(_:)`), each of which returns once every service was asked;
/// await what happens on its own (a service that locks the session from its run loop) with
/// `waitForCall(_:of:)` or `waitUntil(_:)`.
public final class TestHost: Sendable {
    /// The host under test. Do not take its `reports`: the test host reads them (into
    /// `reports` here), and a second reader would end that stream.
    public let host: PluggableApplicationHost
    /// Every hook call, in the order the host made them.
    public let calls: TestLog<RecordedHookCall>
    /// Every report the host made (status, ready, stopping, ...), in order.
    public let reports: TestLog<HostReport>
    /// What the host and its services logged.
    public let logs: CapturedLogs
    /// How long a wait lasts before it fails the test.
    public let timeout: Duration

    init(host: PluggableApplicationHost, calls: TestLog<RecordedHookCall>, logs: CapturedLogs, timeout: Duration) {
        self.host = host
        self.calls = calls
        self.reports = TestLog()
        self.logs = logs
        self.timeout = timeout
    }

    /// The bus the services talk through.
    public var bus: MessageBus { host.bus }

    /// The values the services share, to read (`sharedState[ThemeColor.self]`) or set.
    public var sharedState: SharedStateStore { host.sharedState }

    /// The host's lifecycle state now.
    public var state: ApplicationState { host.state }

    /// The host's status now.
    public var status: HostStatus { host.status }

    /// The events `service` received so far, in order.
    public func events(of service: String) -> [LifecycleEvent] {
        calls.all.filter { $0.service == service }.map(\.event)
    }

    /// The services that received `event` so far, in the order they received it.
    public func services(receiving event: LifecycleEvent) -> [String] {
        calls.all.filter { $0.event == event }.map(\.service)
    }

    // MARK: Awaiting

    /// Waits until the launch finished and returns its options.
    /// - Throws: `LaunchFailure` when the launch failed.
    @discardableResult
    public func launched() async throws(LaunchFailure) -> LaunchOptions {
        try await host.launched()
    }

    /// Waits until the host is in `state` (returns at once when it is). The host reports its
    /// state when a request or the launch ends, so wait for a state one ends in: `active`,
    /// `background` or `notRunning`; `inactive` and `terminating` pass by within a request.
    /// - Throws: `TestHostTimeout` after the host's timeout.
    public func waitUntil(_ state: ApplicationState) async throws(TestHostTimeout) {
        let start = reports.count
        if host.state == state { return }
        let report = await reports.first(from: start, timeout: timeout) { $0.status?.state == state }
        guard report != nil || host.state == state else {
            throw TestHostTimeout(waitingFor: "state \(state)", waited: timeout, calls: calls.all, state: host.state)
        }
    }

    /// Every `Message` published on the bus from now on, in order: how a test waits for what a
    /// service does on its own (from its `run(_:)` loop, say). Call it before the action, then
    /// `await messages.first { … }`, which fails after a timeout instead of hanging:
    ///
    /// ```swift
    /// let beats = host.messages(of: Heartbeat.Beat.self)
    /// try await host.launched()
    /// #expect(await beats.first { $0.count == 2 } != nil)
    /// ```
    public func messages<Message: Sendable>(of type: Message.Type) -> TestLog<Message> {
        let log = TestLog<Message>()
        _ = host.bus.observe(type) { log.append($0) }
        return log
    }

    /// The messages of `type` published from now on, each with the host request during which
    /// it was published (`BusDelivery.requestID`).
    public func deliveries<Message: Sendable>(of type: Message.Type) -> TestLog<BusDelivery<Message>> {
        let log = TestLog<BusDelivery<Message>>()
        _ = host.bus.observeDeliveries(type) { log.append($0) }
        return log
    }

    /// Waits until `service` received `event` (returns at once when it already did) and returns
    /// that call.
    /// - Throws: `TestHostTimeout` after the host's timeout.
    @discardableResult
    public func waitForCall(_ event: LifecycleEvent, of service: String) async throws(TestHostTimeout) -> RecordedHookCall {
        let wanted = RecordedHookCall(service, event)
        guard let call = await calls.first(timeout: timeout, where: { $0 == wanted }) else {
            throw TestHostTimeout(waitingFor: wanted.description, waited: timeout, calls: calls.all, state: host.state)
        }
        return call
    }

    // MARK: Driving

    /// Background: `willResignActive`, then `didEnterBackground`. False when already there.
    /// `cause` as the machine gives it (`sleep`: see `PluggableApplicationHost.enterBackground(cause:)`).
    @discardableResult
    public func enterBackground(cause: String? = nil) async throws(IllegalTransition) -> Bool {
        try await host.enterBackground(cause: cause)
    }

    /// Foreground: `willEnterForeground`, then `didBecomeActive`. False when already active.
    /// `cause` as the machine gives it (`resume`).
    @discardableResult
    public func enterForeground(cause: String? = nil) async throws(IllegalTransition) -> Bool {
        try await host.enterForeground(cause: cause)
    }

    /// Tells every service about memory pressure, as a PSI trigger or the daemon's SIGRTMIN+18 does.
    public func receiveMemoryWarning(level: MemoryWarningLevel = .warning) async throws(IllegalTransition) {
        try await host.receiveMemoryWarning(level: level)
    }

    /// Tells every service the time changed, as the daemon does when the clock is set, the zone
    /// changes or midnight passes.
    public func receiveSignificantTimeChange(_ change: SignificantTimeChange = .clock) async throws(IllegalTransition) {
        try await host.receiveSignificantTimeChange(change)
    }

    /// Reports a network path, as the daemon's source does; every service hears of a change.
    public func updateNetworkPath(_ path: NetworkPath) async {
        await host.updateNetworkPath(path)
    }

    /// Reports a power state, as the daemon's sources do; every service hears of a change.
    public func updatePowerState(_ state: PowerState) async {
        await host.updatePowerState(state)
    }

    /// Locks or unlocks the session, as the session-lock service does. False when nothing changed.
    @discardableResult
    public func setSessionLocked(_ locked: Bool, reason: String? = nil) async throws(IllegalTransition) -> Bool {
        try await host.setSessionLocked(locked, reason: reason)
    }

    /// Applies a new service list as the daemon does on SIGHUP; the new services are recorded too.
    @discardableResult
    public func reload(_ services: [ServiceDescriptor]) async throws(InvalidConfiguration) -> ConfigurationDidReload {
        let calls = calls
        return try await host.reload(services.map { $0.recording(into: calls) })
    }

    /// Terminates the host: `willTerminate` to every service in reverse order.
    public func terminate() async {
        await host.terminate()
    }
}

extension HostReport {
    /// The status the report carries, if any.
    var status: HostStatus? {
        switch self {
        case .status(let status), .ready(let status), .reloading(let status), .stopped(let status), .launchFailed(_, let status):
            status
        case .progress, .stopping:
            nil
        }
    }
}

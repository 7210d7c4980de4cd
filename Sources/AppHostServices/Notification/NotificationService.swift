import AppHost
import AppHostSupport
import Logging
import ServiceContextModule
import Synchronization

/// Local notifications about the lifecycle events and bus messages the config chooses, to the
/// journal and to the desktop (freedesktop notifications over the session bus).
///
/// Everything is sent from `run(_:)`, never from a hook, so a slow or broken sink cannot hold up
/// the host. Identical notifications within the coalescing window are sent once (and a summary
/// with the count when the window closes); while the session is locked, title and body are
/// replaced by "1 new notification", as a lock screen does. A sink that fails is reported once
/// and retried with exponential backoff (1s, 2s, 4s ... 60s).
///
/// ```yaml
/// settings:
///   on: [didEnterBackground, didReceiveMemoryWarning.critical, reloadFailed, overran]
///   sinks: [journal, desktop]   # default [journal]
///   coalesce-window: 10s
///   app-name: apphostd
/// ```
public final class NotificationService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "notification"
    /// The keys its `settings:` section may hold.
    public static let settingKeys = ["on", "sinks", "coalesce-window", "app-name"]
    /// One line for `apphostd services`.
    public static let summary = "Local notifications to the journal and the desktop (D-Bus) about chosen events; redacted while locked"

    /// Which events notify.
    let triggers: Set<NotificationTrigger>
    /// Sink names, in order (`journal`, `desktop`).
    let sinkNames: [String]
    /// Identical notifications within this window are sent once.
    let coalesceWindow: Duration
    /// The application's name on the desktop and in redacted notifications.
    let appName: String
    /// Longest wait between retries of a failing sink.
    let maximumBackoff: Duration
    /// Where the desktop sink sends; nil: no desktop here.
    private let desktop: (any DesktopNotificationTransport)?
    /// Whether it was given a desktop transport.
    var hasDesktopTransport: Bool { desktop != nil }
    /// The service's own view of the lock, from lock messages and protected-data hooks; nil
    /// until it heard of one (then the host's `isSessionLocked` answers).
    private let lockView = Mutex<Bool?>(nil)

    /// Builds the service from its settings section, without a desktop: a `desktop` sink says
    /// once that it is off.
    public convenience init(configuration: ServiceSection) throws(ConfigurationError) {
        try self.init(configuration: configuration, desktopNotifications: nil)
    }

    /// Builds the service from its settings section, its `desktop` sink on `desktopNotifications`
    /// (AppHostSystemd's `DesktopNotificationClient`, or a transport of your own).
    public convenience init(configuration: ServiceSection, desktopNotifications: (any DesktopNotificationTransport)?) throws(ConfigurationError) {
        try self.init(configuration: configuration, desktopNotifications: desktopNotifications, maximumBackoff: .seconds(60))
    }

    init(configuration: ServiceSection, desktopNotifications: (any DesktopNotificationTransport)?, maximumBackoff: Duration) throws(ConfigurationError) {
        try configuration.requireOnlyKeys(Self.settingKeys)
        var triggers: Set<NotificationTrigger> = []
        let names = try configuration.strings("on") ?? NotificationTrigger.defaultNames
        for (index, name) in names.enumerated() {
            guard let parsed = NotificationTrigger.parse(name) else {
                throw configuration.error("on[\(index)]", "unknown event \"\(name)\"", hint: "valid: \(NotificationTrigger.validNames.joined(separator: ", "))")
            }
            triggers.formUnion(parsed)
        }
        let sinks = try configuration.strings("sinks") ?? ["journal"]
        guard !sinks.isEmpty else {
            throw configuration.error("sinks", "no sink given", hint: "use journal, desktop or both")
        }
        for (index, sink) in sinks.enumerated() {
            guard ["journal", "desktop"].contains(sink) else {
                throw configuration.error("sinks[\(index)]", "unknown sink \"\(sink)\"", hint: "valid: journal, desktop")
            }
            guard sinks.firstIndex(of: sink) == index else {
                throw configuration.error("sinks[\(index)]", "\"\(sink)\" is listed twice")
            }
        }
        let appName = try configuration.string("app-name") ?? "apphostd"
        guard !appName.isEmpty else {
            throw configuration.error("app-name", "must not be empty", hint: "for example apphostd")
        }
        self.triggers = triggers
        self.sinkNames = sinks
        self.coalesceWindow = try configuration.duration("coalesce-window") ?? .seconds(10)
        self.appName = appName
        self.maximumBackoff = maximumBackoff
        self.desktop = desktopNotifications
    }

    // MARK: Hooks

    /// From now on, notifications are redacted.
    public func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        lockView.withLock { $0 = true }
    }

    /// From now on, notifications show their content again.
    public func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        lockView.withLock { $0 = false }
    }

    // MARK: Run loop

    enum Input: Sendable {
        case record(LifecycleEventRecord)
        case reloadFailed(ConfigurationReloadDidFail)
        case lockChanged(SessionLockDidChange)
        case windowClosed(String)
        case retry(sink: Int)
    }

    /// An input, with the context of the request it came from (nil for the run loop's own
    /// timers: a coalesced summary belongs to no one request).
    struct Arrival: Sendable {
        let input: Input
        let context: ServiceContext?
    }

    /// Turns bus messages into notifications and delivers them, one at a time.
    public func run(_ application: ApplicationHandle) async throws {
        // Subscribed before the first suspension, so nothing published meanwhile is missed.
        let (inputs, inputSink) = application.bus.inputs { (bus: BusInputs<Arrival>) in
            bus.relay(LifecycleEventRecord.self) { Arrival(input: .record($0.message), context: $0.context) }
            bus.relay(ConfigurationReloadDidFail.self) { Arrival(input: .reloadFailed($0.message), context: $0.context) }
            bus.relay(SessionLockDidChange.self) { Arrival(input: .lockChanged($0.message), context: $0.context) }
        }
        var outbox = await NotificationOutbox(sinks: makeSinks(application), window: coalesceWindow, maximumBackoff: maximumBackoff, appName: appName, logger: application.logger)
        await withDiscardingTaskGroup { group in
            for await arrival in inputs {
                await ServiceContext.withValue(arrival.context) {
                    await handle(arrival.input, outbox: &outbox, application: application)
                }
                for (delay, input) in outbox.takeTimers() {
                    group.addTask {
                        do {
                            try await Task.sleep(for: delay)
                            inputSink.yield(Arrival(input: input, context: nil))
                        } catch {}
                    }
                }
            }
            group.cancelAll()
        }
    }

    /// One input of the run loop, in the context of the request it came from.
    private func handle(_ input: Input, outbox: inout NotificationOutbox, application: ApplicationHandle) async {
        switch input {
        case .record(let record):
            for notification in LocalNotification.from(record, triggers: triggers, appName: appName) {
                await outbox.submit(notification, locked: isLocked(application))
            }
        case .reloadFailed(let failure):
            guard triggers.contains(.reloadFailed) else { return }
            await outbox.submit(.from(failure), locked: isLocked(application))
        case .lockChanged(let change):
            lockView.withLock { $0 = change.isLocked }
            guard triggers.contains(change.isLocked ? .sessionLocked : .sessionUnlocked) else { return }
            await outbox.submit(.from(change, appName: appName), locked: change.isLocked)
        case .windowClosed(let key):
            await outbox.closeWindow(key, locked: isLocked(application))
        case .retry(let sink):
            await outbox.retry(sink)
        }
    }

    private func isLocked(_ application: ApplicationHandle) -> Bool {
        lockView.withLock { $0 } ?? application.isSessionLocked
    }

    private func makeSinks(_ application: ApplicationHandle) -> [any NotificationSink] {
        sinkNames.map { name -> any NotificationSink in
            switch name {
            case "desktop":
                DesktopNotificationSink(transport: desktop, appName: appName)
            default:
                JournalNotificationSink(logger: application.logger)
            }
        }
    }
}

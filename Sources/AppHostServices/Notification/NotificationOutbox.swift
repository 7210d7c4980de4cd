import Logging

/// The notification service's delivery state, owned by its run loop: coalescing windows and,
/// per sink, a backlog with exponential backoff.
struct NotificationOutbox {
    private struct Window {
        let notification: LocalNotification
        var suppressed = 0
    }

    private struct SinkState {
        let sink: any NotificationSink
        var isActive = true
        var backlog: [LocalNotification] = []
        var failures = 0
        var isRetryScheduled = false
        var droppedWhileFailing = 0
    }

    /// Most notifications a failing sink keeps for its retry; the oldest go first.
    static let backlogLimit = 100

    /// Timers the run loop must start: after the delay, feed the input back in.
    private(set) var timers: [(Duration, NotificationService.Input)] = []
    private var sinks: [SinkState]
    private var windows: [String: Window] = [:]
    private let window: Duration
    private let maximumBackoff: Duration
    private let logger: Logger
    private let appName: String

    init(sinks: [any NotificationSink], window: Duration, maximumBackoff: Duration, appName: String, logger: Logger) async {
        self.appName = appName
        self.window = window
        self.maximumBackoff = maximumBackoff
        self.logger = logger
        var states: [SinkState] = []
        for sink in sinks {
            var state = SinkState(sink: sink)
            if let reason = await sink.unavailability() {
                state.isActive = false
                logger.warning("\(sink.name) notifications are off: \(reason)", metadata: ["sink": "\(sink.name)"])
            }
            states.append(state)
        }
        self.sinks = states
    }

    /// Sends `notification` unless an identical one went out within the window, in which case it
    /// is counted for the summary at the window's end.
    mutating func submit(_ notification: LocalNotification, locked: Bool) async {
        let key = Self.key(notification)
        if window > .zero {
            if windows[key] != nil {
                windows[key]!.suppressed += 1
                return
            }
            windows[key] = Window(notification: notification)
            timers.append((window, .windowClosed(key)))
        }
        await send(locked ? notification.redacted(appName: appName) : notification)
    }

    /// Ends a coalescing window: when duplicates were held back, sends one summary with their
    /// count and keeps the window open for another round.
    mutating func closeWindow(_ key: String, locked: Bool) async {
        guard let closing = windows.removeValue(forKey: key) else { return }
        guard closing.suppressed > 0 else { return }
        let original = closing.notification
        let times = closing.suppressed == 1 ? "once more" : "\(closing.suppressed) more times"
        var summary = LocalNotification(kind: original.kind, title: original.title, body: "\(original.body) (repeated \(times) within \(window.configText))")
        summary.count = closing.suppressed
        windows[key] = Window(notification: original)
        timers.append((window, .windowClosed(key)))
        await send(locked ? summary.redacted(appName: appName) : summary)
    }

    /// Retries a failing sink's backlog.
    mutating func retry(_ index: Int) async {
        sinks[index].isRetryScheduled = false
        while let next = sinks[index].backlog.first {
            do {
                try await sinks[index].sink.deliver(next)
                sinks[index].backlog.removeFirst()
            } catch {
                fail(index, error: error)
                return
            }
        }
        let state = sinks[index]
        logger.notice("\(state.sink.name) notifications work again after \(state.failures.counted("failed attempt"))\(state.droppedWhileFailing > 0 ? "; \(state.droppedWhileFailing) \(state.droppedWhileFailing == 1 ? "was" : "were") dropped" : "")", metadata: ["sink": "\(state.sink.name)"])
        sinks[index].failures = 0
        sinks[index].droppedWhileFailing = 0
    }

    /// Hands over the timers to start and forgets them.
    mutating func takeTimers() -> [(Duration, NotificationService.Input)] {
        defer { timers = [] }
        return timers
    }

    private mutating func send(_ notification: LocalNotification) async {
        for index in sinks.indices where sinks[index].isActive {
            if sinks[index].failures > 0 {
                // Failing: keep it for the retry, in order.
                enqueue(notification, at: index)
                continue
            }
            do {
                try await sinks[index].sink.deliver(notification)
            } catch {
                enqueue(notification, at: index)
                fail(index, error: error)
            }
        }
    }

    private mutating func enqueue(_ notification: LocalNotification, at index: Int) {
        sinks[index].backlog.append(notification)
        if sinks[index].backlog.count > Self.backlogLimit {
            sinks[index].backlog.removeFirst()
            sinks[index].droppedWhileFailing += 1
        }
    }

    private mutating func fail(_ index: Int, error: any Error) {
        sinks[index].failures += 1
        let failures = sinks[index].failures
        let delay = Self.backoff(afterFailures: failures, maximum: maximumBackoff)
        if failures == 1 {
            logger.error("\(sinks[index].sink.name) notifications failed: \(error); retrying with backoff", metadata: ["sink": "\(sinks[index].sink.name)"])
        } else {
            logger.debug("\(sinks[index].sink.name) notifications still failing: \(error); next try in \(delay.configText)", metadata: ["sink": "\(sinks[index].sink.name)"])
        }
        guard !sinks[index].isRetryScheduled else { return }
        sinks[index].isRetryScheduled = true
        timers.append((delay, .retry(sink: index)))
    }

    /// 1s, 2s, 4s ... capped at `maximum`.
    static func backoff(afterFailures failures: Int, maximum: Duration) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        return min(.seconds(1 << exponent), maximum)
    }

    private static func key(_ notification: LocalNotification) -> String {
        notification.title + "\u{0}" + notification.body
    }
}

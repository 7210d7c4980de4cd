import AppHost

/// One notification, as every sink delivers it.
struct LocalNotification: Sendable, Hashable {
    /// What it is about; each kind has a stable journal `MESSAGE_ID`.
    enum Kind: String, Sendable, Hashable, CaseIterable {
        case lifecycle, memoryWarning, overran, reloadFailed, sessionLocked, sessionUnlocked

        /// journald's `MESSAGE_ID` (128 bits, 32 lowercase hex digits); never change these:
        /// operators filter with `journalctl MESSAGE_ID=...`.
        var messageID: String {
            switch self {
            case .lifecycle: "5ec9bd10d6384f64abf43a3618b12c4c"
            case .memoryWarning: "160acf6b8b004a1c9b595bd72e847940"
            case .overran: "6535b8d3e61145348321f7cd9f801e7d"
            case .reloadFailed: "04a1203b24e14d02a94bf71e1a233c4b"
            case .sessionLocked: "273ba9bfc45d40bb829c0361975ade64"
            case .sessionUnlocked: "fdb1651a4f1f46d6be1e9419f70e5bc0"
            }
        }
    }

    let kind: Kind
    let title: String
    let body: String
    /// How many notifications this one stands for (more than 1 after coalescing).
    var count = 1
    /// True when title and body were replaced because the session is locked.
    var isRedacted = false

    /// What a lock screen shows instead: the app's name and a count, nothing of the content.
    func redacted(appName: String) -> LocalNotification {
        LocalNotification(
            kind: kind, title: appName,
            body: count.counted("new notification"),
            count: count, isRedacted: true
        )
    }

    /// The notifications `record` stands for under `triggers`.
    static func from(_ record: LifecycleEventRecord, triggers: Set<NotificationTrigger>, appName: String) -> [LocalNotification] {
        var result: [LocalNotification] = []
        let name = record.event.name
        if triggers.contains(.event(name)) {
            if case .didReceiveMemoryWarning(let level) = record.event {
                result.append(LocalNotification(
                    kind: .memoryWarning, title: "Memory warning (\(level.rawValue))",
                    body: "The system asked \(appName) to release memory (\(level.rawValue))."
                ))
            } else {
                result.append(LocalNotification(kind: .lifecycle, title: title(of: record.event), body: "\(appName) went from \(record.from) to \(record.to) (\(name))."))
            }
        }
        if triggers.contains(.overran), !record.overruns.isEmpty {
            let list = record.overruns.map(\.description).joined(separator: "; ")
            result.append(LocalNotification(kind: .overran, title: "A service overran its deadline", body: "\(list)."))
        }
        return result
    }

    private static func title(of event: LifecycleEvent) -> String {
        switch event {
        case .didFinishLaunching: "Launched"
        case .didBecomeActive: "Active"
        case .willResignActive: "Resigning active"
        case .didEnterBackground: "Moved to the background"
        case .willEnterForeground: "Returning to the foreground"
        case .protectedDataWillBecomeUnavailable: "Protected data unavailable"
        case .protectedDataDidBecomeAvailable: "Protected data available"
        default: "Lifecycle: \(event.name)"
        }
    }

    /// A refused reload.
    static func from(_ failure: ConfigurationReloadDidFail) -> LocalNotification {
        LocalNotification(kind: .reloadFailed, title: "Configuration reload failed", body: "\(failure.message). The previous configuration keeps running.")
    }

    /// A lock change.
    static func from(_ change: SessionLockDidChange, appName: String) -> LocalNotification {
        change.isLocked
            ? LocalNotification(kind: .sessionLocked, title: "Session locked", body: "\(appName) locked the session: \(change.reason).")
            : LocalNotification(kind: .sessionUnlocked, title: "Session unlocked", body: "\(appName) unlocked the session: \(change.reason).")
    }
}

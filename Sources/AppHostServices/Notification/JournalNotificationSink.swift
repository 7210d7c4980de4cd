import Logging

/// Writes each notification as a `notice` record through the application's logger; under
/// systemd that is a journal entry with a stable `MESSAGE_ID` per kind.
struct JournalNotificationSink: NotificationSink {
    let logger: Logger

    var name: String { "journal" }

    func unavailability() async -> String? { nil }

    func deliver(_ notification: LocalNotification) async throws {
        var metadata: Logger.Metadata = [
            "message_id": .string(notification.kind.messageID),
            "notification_kind": .string(notification.kind.rawValue),
            "notification_title": .string(notification.title),
            "notification_body": .string(notification.body),
        ]
        if notification.count > 1 { metadata["notification_count"] = .stringConvertible(notification.count) }
        if notification.isRedacted { metadata["notification_redacted"] = "true" }
        logger.notice("\(notification.title): \(notification.body)", metadata: metadata)
    }
}

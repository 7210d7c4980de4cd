/// Somewhere notifications go: the journal, the desktop.
protocol NotificationSink: Sendable {
    /// The name the `sinks:` setting uses.
    var name: String { get }
    /// Why the sink cannot work at all here (reported once; the sink stays off), or nil.
    func unavailability() async -> String?
    /// Delivers one notification; throws when it could not, and will be retried with backoff.
    func deliver(_ notification: LocalNotification) async throws
}

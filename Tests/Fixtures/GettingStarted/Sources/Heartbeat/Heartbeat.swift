import AppHost

/// Logs each launch and says when it flushes before the background.
public struct Heartbeat: ApplicationService {
    /// Time between two heartbeats.
    public let interval: Duration

    /// Reads `interval` (default 30s) from the service's `settings:`.
    public init(configuration: ServiceConfiguration) throws(ConfigurationError) {
        try configuration.requireOnlyKeys(["interval"])
        interval = try configuration.duration("interval") ?? .seconds(30)
    }

    public func application(_ app: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        app.logger.info("launch #\(options.launchCount), previous exit: \(options.previousExit)")
        return true
    }

    public func applicationDidEnterBackground(_ app: ApplicationHandle) async throws {
        app.logger.info("flushing before background")
    }
}

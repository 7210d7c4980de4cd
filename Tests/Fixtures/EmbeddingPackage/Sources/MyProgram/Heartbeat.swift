import AppHost

struct Heartbeat: ApplicationService {
    let interval: Duration

    init(configuration: ServiceConfiguration) throws(ConfigurationError) {
        try configuration.requireOnlyKeys(["interval"])
        interval = try configuration.duration("interval") ?? .seconds(30)
    }

    func application(_ app: HostedApplication, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        app.logger.info("launch #\(options.launchCount), previous exit: \(options.previousExit)")
        return true
    }

    func applicationDidEnterBackground(_ app: HostedApplication) async throws {
        app.logger.info("flushing before background")
    }
}

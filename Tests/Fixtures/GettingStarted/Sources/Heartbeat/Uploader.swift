// README.md's "The network path and the power state", as written there.
import AppHost

struct Uploader: ApplicationService {
    func applicationNetworkDidChange(_ application: ApplicationHandle) async throws {
        let path = application.networkPath
        application.logger.info("uploads \(path.status == .available && !path.isExpensive ? "resume" : "wait")")
    }
}

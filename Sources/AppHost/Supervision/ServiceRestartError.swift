/// Why `PluggableApplicationHost.restartService(named:)` did not restart a service.
public struct ServiceRestartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. A struct with static members, as swift-service-lifecycle's
    /// `ServiceGroupError.Code` and every error code here: a new code is not a breaking change.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case noSuchService, notRunning, failedToLaunch
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The host has no service of that name.
        public static let noSuchService = Code(.noSuchService)
        /// The host does not run (not launched yet, or terminating).
        public static let notRunning = Code(.notRunning)
        /// The new instance could not be built or refused to launch: it is disabled.
        public static let failedToLaunch = Code(.failedToLaunch)

        /// The code in words, as the error's description says it.
        public var description: String {
            switch base {
            case .noSuchService: "no such service"
            case .notRunning: "not running"
            case .failedToLaunch: "failed to launch"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// The service asked for.
    public let service: String
    /// The details, for people.
    public let reason: String

    /// An error of `code` about `service`.
    public init(_ code: Code, service: String, reason: String) {
        self.code = code
        self.service = service
        self.reason = reason
    }

    /// `notification: failed to launch: …`.
    public var description: String { "\(service): \(code): \(reason)" }
}

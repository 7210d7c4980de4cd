/// Why `PluggableApplicationHost.restartService(named:)` did not restart a service.
public struct ServiceRestartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong; new codes may come, so a `switch` over it needs a default.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String

        /// The host has no service of that name.
        public static let noSuchService = Code(name: "no such service")
        /// The host does not run (not launched yet, or terminating).
        public static let notRunning = Code(name: "not running")
        /// The new instance could not be built or refused to launch: it is disabled.
        public static let failedToLaunch = Code(name: "failed to launch")

        public var description: String { name }
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

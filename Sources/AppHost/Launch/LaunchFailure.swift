/// Why launch stopped. By the time it is thrown, every service that had launched got
/// `applicationWillTerminate` in reverse order.
public struct LaunchFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    #if hasAttribute(nonexhaustive)
    @nonexhaustive(warn)
    #endif
    public enum Reason: Hashable, Sendable {
        /// The hook returned `false`.
        case refused
        /// The hook threw; the error as text.
        case threw(String)
        /// The hook did not return within its deadline.
        case overran(Duration)
        /// The service could not be built from its configuration.
        case invalidConfiguration(String)
        /// The state directory could not be used.
        case stateDirectory(String)
        /// The host was not in a state that can launch.
        case notLaunchable(ApplicationState)
        /// `terminate()` (SIGTERM) came before the launch finished: the host stopped waiting for
        /// the hook in progress and rolled back. A requested stop, not an error.
        case terminated
    }

    /// The required service that stopped the launch; empty when the host itself failed.
    public let service: String
    /// The hook it failed in, such as `applicationDidFinishLaunching`.
    public let hook: String
    /// Why.
    public let reason: Reason

    public var description: String {
        let subject = service.isEmpty ? "launch" : "\(service) failed \(hook)"
        switch reason {
        case .refused: return "\(subject): returned false"
        case .threw(let error): return "\(subject): \(error)"
        case .overran(let deadline): return "\(subject): no answer within \(deadline.configText)"
        case .invalidConfiguration(let error): return "\(service): \(error)"
        case .stateDirectory(let error): return "state directory: \(error)"
        case .notLaunchable(let state): return "cannot launch while \(state)"
        case .terminated: return service.isEmpty ? "terminated during launch" : "terminated during launch, in \(service) \(hook)"
        }
    }

    /// The errno systemd gets in `ERRNO=` for this failure.
    public var errnoValue: Int32 {
        switch reason {
        case .refused: 125  // ECANCELED
        case .threw: 5  // EIO
        case .overran: 110  // ETIMEDOUT
        case .invalidConfiguration: 22  // EINVAL
        case .stateDirectory: 13  // EACCES
        case .notLaunchable: 114  // EALREADY
        case .terminated: 125  // ECANCELED
        }
    }
}

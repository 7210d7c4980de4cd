/// What the host is asked to do, as the lifecycle state machine sees it: every request whose
/// legality depends on the state.
package enum LifecycleRequest: Sendable, Hashable, CustomStringConvertible {
    /// Launch the services (once, from `notRunning`).
    case launch
    /// `active → inactive → background`.
    case enterBackground
    /// `background → inactive → active`.
    case enterForeground
    /// Background when active, foreground when in the background (SIGUSR1).
    case toggleBackground
    /// Tell the services memory is short, then trim the host's heap.
    case memoryWarning(MemoryWarningLevel)
    /// Lock (`true`) or unlock the session: the protected-data events.
    case sessionLock(Bool)
    /// Apply a new configuration.
    case reload
    /// `willTerminate` to every service, then `notRunning`.
    case terminate

    /// The state the request leads to from `state`, as an `IllegalTransition` names it.
    package func target(from state: ApplicationState) -> ApplicationState {
        switch self {
        case .launch: .launching
        case .enterBackground: .background
        case .enterForeground, .toggleBackground: .active
        case .terminate: .terminating
        case .memoryWarning, .sessionLock, .reload: state
        }
    }

    package var description: String {
        switch self {
        case .launch: "launch"
        case .enterBackground: "enterBackground"
        case .enterForeground: "enterForeground"
        case .toggleBackground: "toggleBackground"
        case .memoryWarning(let level): "memory warning (\(level))"
        case .sessionLock(let locked): locked ? "session lock" : "session unlock"
        case .reload: "reload"
        case .terminate: "terminate"
        }
    }
}

/// What the host is asked to do, as the lifecycle state machine sees it: every request whose
/// legality depends on the state, the launch's own steps and terminate's two halves among them.
package enum LifecycleRequest: Sendable, Hashable, CustomStringConvertible {
    /// Launch the services (once, from `notRunning`).
    case launch
    /// The launch flow succeeded: active, or background when it restores a run that ended there.
    case finishLaunch(intoBackground: Bool)
    /// A launch goes on to its next service (the host's launch, or the services a reload adds);
    /// refused once a terminate is pending.
    case continueLaunch
    /// The launch could not begin (its launch state): back to `notRunning` with no service.
    case abortLaunch
    /// The launch restores a session that was locked when the previous run ended.
    case restoreSessionLock(reason: String)
    /// `active → inactive → background`.
    case enterBackground
    /// `background → inactive → active`.
    case enterForeground
    /// Background when active, foreground when in the background (SIGUSR1).
    case toggleBackground
    /// Tell the services memory is short, then trim the host's heap.
    case memoryWarning(MemoryWarningLevel)
    /// Tell the services the clock, the time zone or the local day changed.
    case significantTimeChange
    /// Tell the services a condition of the machine changed (`networkDidChange`,
    /// `powerStateDidChange`).
    case conditionChange(LifecycleEvent)
    /// Lock (`true`, with why) or unlock the session: the protected-data events.
    case sessionLock(Bool, reason: String)
    /// Apply a new configuration.
    case reload
    /// The machine is about to sleep or shut down: to the background, the state durably on
    /// disk, and the state to return to kept until the resume.
    case prepareForSleep(MachineSleep.Kind)
    /// The machine is awake again after that preparation (or the shutdown did not happen); nil:
    /// whatever it prepared for is over (logind went away and will not say).
    case resume(MachineSleep.Kind?)
    /// A step of a service's restart policy came due: its run loop or its instance started
    /// again, or the service stopped. Between requests, before the next queued one.
    case supervise(RestartSupervisor.Step)
    /// An operator restarts the service named so (Host1's `RestartService`, `apphostd
    /// restart`); `isKnown` says whether the host runs a service of that name.
    case restartService(String, isKnown: Bool)
    /// A terminate arrives: from now on it is pending, ahead of every request.
    case terminate
    /// Carry out the terminate: the pending one, a cancelled host's, or a failed launch's
    /// rollback. `willTerminate` to every service, then `notRunning`.
    case terminateNow

    /// The state the request leads to from `state`, as an `IllegalTransition` names it.
    package func target(from state: ApplicationState) -> ApplicationState {
        switch self {
        case .launch: .launching
        case .finishLaunch(let intoBackground): intoBackground ? .background : .active
        case .abortLaunch: .notRunning
        case .continueLaunch: state
        case .enterBackground: .background
        case .enterForeground: .active
        case .toggleBackground: state == .active ? .background : .active
        case .terminate, .terminateNow: .terminating
        case .prepareForSleep: .background
        case .memoryWarning, .significantTimeChange, .conditionChange, .sessionLock, .restoreSessionLock, .reload, .resume, .supervise, .restartService: state
        }
    }

    package var description: String {
        switch self {
        case .launch: "launch"
        case .finishLaunch(let intoBackground): intoBackground ? "finish launch into the background" : "finish launch"
        case .abortLaunch: "abort launch"
        case .continueLaunch: "continue launch"
        case .restoreSessionLock: "restore session lock"
        case .enterBackground: "enterBackground"
        case .enterForeground: "enterForeground"
        case .toggleBackground: "toggleBackground"
        case .memoryWarning(let level): "memory warning (\(level))"
        case .significantTimeChange: "significant time change"
        case .conditionChange(let event): "\(event)"
        case .sessionLock(let locked, _): locked ? "session lock" : "session unlock"
        case .reload: "reload"
        case .prepareForSleep(let kind): kind == .sleep ? "prepare for sleep" : "prepare for shutdown"
        case .resume(let kind): kind == .shutdown ? "resume (the shutdown did not happen)" : "resume"
        case .supervise(.restart(let scope)): scope == .runLoop ? "restart of a run loop" : "restart of a service"
        case .supervise(.stop): "stop of a service"
        case .restartService(let name, _): "restart of \(name)"
        case .terminate: "terminate"
        case .terminateNow: "terminate now"
        }
    }
}

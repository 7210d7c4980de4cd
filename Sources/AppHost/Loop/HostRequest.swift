/// Where a request's answer goes.
typealias Reply<Success: Sendable, Failure: Error> = CheckedContinuation<Result<Success, Failure>, Never>

/// One request to the host, with where its answer goes. Requests are handled one at a time, in
/// arrival order, except `terminate`, which never waits behind queued requests.
enum HostRequest: Sendable {
    /// A move between foreground and background: `.enterBackground`, `.enterForeground` or
    /// `.toggleBackground`.
    case lifecycle(LifecycleRequest, reply: Reply<ApplicationState?, IllegalTransition>)
    /// A condition of the machine: memory is short. Merges (`merging(_:)`): every caller waits
    /// for the one fan-out.
    case memoryWarning(MemoryWarningLevel, replies: [Reply<Void, IllegalTransition>])
    /// A condition of the machine: the clock, the zone or the day changed; what changed rides in
    /// the request's cause. Merges like a memory warning, the causes combined by the queue.
    case significantTimeChange(replies: [Reply<Void, IllegalTransition>])
    /// A condition of the machine: the network path, the power state. Merges: a newer value
    /// replaces the one waiting (the services need the newest, once). Never refused: a value
    /// that comes before the launch or after the end is kept for whoever reads it.
    case networkPath(NetworkPath, replies: [Reply<Void, Never>])
    case powerState(PowerState, replies: [Reply<Void, Never>])
    case sessionLock(locked: Bool, reason: String?, reply: Reply<Bool, IllegalTransition>)
    case reload(load: @Sendable () throws -> [ServiceDescriptor], reply: Reply<ConfigurationDidReload, InvalidConfiguration>)
    case restartService(name: String, reply: Reply<Void, ServiceRestartError>)
    case note(String?, reply: Reply<Void, Never>)
    case barrier(@Sendable () -> Void, reply: Reply<Void, Never>)
    case launched(reply: Reply<LaunchOptions, LaunchFailure>)
    case terminated(reply: Reply<Void, Never>)
    case terminate(reason: String, reply: Reply<Void, Never>?)

    var name: String {
        switch self {
        case .lifecycle(let request, _): "\(request)"
        case .memoryWarning(let level, _): "memory warning (\(level))"
        case .significantTimeChange: "significant time change"
        case .networkPath(let path, _): "network path (\(path))"
        case .powerState(let state, _): "power state (\(state))"
        case .sessionLock(let locked, _, _): locked ? "session lock" : "session unlock"
        case .reload: "reload"
        case .restartService(let name, _): "restart of \(name)"
        case .note: "status note"
        case .barrier: "barrier"
        case .launched: "wait for launch"
        case .terminated: "wait for terminate"
        case .terminate: "terminate"
        }
    }

    /// Answers a request the host will not carry out (it arrived after the host stopped, or
    /// terminate dropped it from the queue) with `machine`'s refusal. `launch` is how the
    /// launch ended, if it did.
    func refuse(by machine: LifecycleStateMachine, launch: Result<LaunchOptions, LaunchFailure>?) {
        switch self {
        case .lifecycle(let request, let reply):
            reply.resume(returning: .failure(machine.refusal(of: request).illegalTransition))
        case .memoryWarning(let level, let replies):
            for reply in replies { reply.resume(returning: .failure(machine.refusal(of: .memoryWarning(level)).illegalTransition)) }
        case .significantTimeChange(let replies):
            for reply in replies { reply.resume(returning: .failure(machine.refusal(of: .significantTimeChange).illegalTransition)) }
        case .networkPath(_, let replies), .powerState(_, let replies):
            for reply in replies { reply.resume(returning: .success(())) }
        case .sessionLock(let locked, let reason, let reply):
            reply.resume(returning: .failure(machine.refusal(of: .sessionLock(locked, reason: reason ?? "")).illegalTransition))
        case .reload(_, let reply):
            let refusal = machine.refusal(of: .reload)
            reply.resume(returning: .failure(InvalidConfiguration(ConfigurationError(keyPath: "", message: refusal.reason))))
        case .restartService(let name, let reply):
            reply.resume(returning: .failure(ServiceRestartError(.notRunning, service: name, reason: machine.refusal(of: .restartService(name, isKnown: true)).reason)))
        case .note(_, let reply): reply.resume(returning: .success(()))
        case .barrier(_, let reply): reply.resume(returning: .success(()))
        case .launched(let reply):
            reply.resume(returning: launch ?? .failure(LaunchFailure(service: "", hook: "", reason: .notLaunchable(machine.state))))
        case .terminated(let reply): reply.resume(returning: .success(()))
        case .terminate(_, let reply): reply?.resume(returning: .success(()))
        }
    }

    /// The condition of the machine the request reports, when it reports one; nil for the
    /// others, which never merge.
    var condition: String? {
        switch self {
        case .memoryWarning: "memory"
        case .significantTimeChange: "time"
        case .networkPath: "network"
        case .powerState: "power"
        default: nil
        }
    }

    /// `self`, waiting in the queue, with `newer` of the same condition merged in: the newer
    /// value (for memory, the higher level) and every caller's reply. Nil when they do not
    /// merge. The mechanism the machine's other conditions use (the time, the network path,
    /// the power state): a condition's newest value is what the services need, once.
    func merging(_ newer: HostRequest) -> HostRequest? {
        switch (self, newer) {
        case (.memoryWarning(let level, let replies), .memoryWarning(let newerLevel, let newerReplies)):
            .memoryWarning(max(level, newerLevel), replies: replies + newerReplies)
        case (.significantTimeChange(let replies), .significantTimeChange(let newerReplies)):
            .significantTimeChange(replies: replies + newerReplies)
        case (.networkPath(_, let replies), .networkPath(let newer, let newerReplies)):
            .networkPath(newer, replies: replies + newerReplies)
        case (.powerState(_, let replies), .powerState(let newer, let newerReplies)):
            .powerState(newer, replies: replies + newerReplies)
        default:
            nil
        }
    }
}

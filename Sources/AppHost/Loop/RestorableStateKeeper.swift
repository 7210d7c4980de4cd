import Logging

/// The restorable-state keeper: the services' bytes as they stand, staged by services and taken
/// at a request's end, kept in the fast tier (the fd store) when they changed and persisted to
/// disk when a step asks; what each tier last got. The loop owns one and tells it the machine's
/// state; it owns nothing of the loop's.
struct RestorableStateKeeper {
    let storage: (any RestorableStateStorage)?
    let logger: Logger
    let sharedState: SharedStateStore
    let outlet: HostOutlet
    /// The services' bytes now, restored ones included until a service replaces them.
    private(set) var services: [String: [UInt8]] = [:]
    /// The last state kept (fd store) and persisted (disk); their generations count on.
    private(set) var lastKept: RestorableState?
    private(set) var lastPersisted: RestorableState?
    private var generation: UInt64 = 0
    /// Bytes arrived since the last keep.
    private var isChanged = false
    /// Services staged bytes the loop has not taken yet (a nudge came while it was idle).
    var hasStaged = false
    /// The last keep failed with this message (logged once until it changes).
    private var lastFailure: String?
    /// A step of the request in progress asked for the state on disk at its end.
    var isPersistDue = false
    /// A step asked that the request answer only once the state is on disk.
    var isDurablePersistDue = false

    init(storage: (any RestorableStateStorage)?, logger: Logger, sharedState: SharedStateStore, outlet: HostOutlet) {
        self.storage = storage
        self.logger = logger
        self.sharedState = sharedState
        self.outlet = outlet
    }

    /// Reads what the previous run kept: every service gets its bytes back; after an unclean
    /// exit the background comes back too (`options` says so), and the session lock: its
    /// reason is returned, for the launch to restore.
    mutating func restore(into options: inout LaunchOptions) -> String? {
        guard let storage else { return nil }
        let logger = self.logger
        guard let state = storage.restore(warning: { logger.warning("restorable state not used: \($0)") }) else { return nil }
        generation = state.generation
        lastKept = state
        lastPersisted = state
        services = state.services
        sharedState.restore(Dictionary(uniqueKeysWithValues: state.services.compactMap { name, bytes in
            name.hasPrefix(Self.sharedStatePrefix) ? (String(name.dropFirst(Self.sharedStatePrefix.count)), bytes) : nil
        }))
        guard options.previousExit == .unclean else {
            logger.info("restored the state of \(state.services.count.counted("service")) (generation \(state.generation))")
            return nil
        }
        options.launchesIntoBackground = state.isInBackground
        let lifecycle = [state.isInBackground ? "background" : "active"] + (state.isSessionLocked ? ["session locked"] : [])
        let cause = options.previousExitCause.map { " (\($0))" } ?? ""
        logger.notice(
            "restored after an unclean exit\(cause): \(lifecycle.joined(separator: ", ")), the state of \(state.services.count.counted("service"))",
            metadata: ["generation": "\(state.generation)"]
        )
        return state.isSessionLocked ? state.sessionLockReason : nil
    }

    /// Takes the bytes `slots` staged; they are kept when the request ends. In registration
    /// order, so of two instances of one name (a reload's restart) the newer one wins.
    mutating func takeStaged(from slots: [ServiceSlot]) {
        hasStaged = false
        guard outlet.hasStagedRestorableState.exchange(false, ordering: .sequentiallyConsistent) else { return }
        for index in slots.indices {
            guard let bytes = slots[index].stagedState.take() else { continue }
            if services.updateValue(bytes, forKey: slots[index].name) != bytes { isChanged = true }
        }
        for (name, bytes) in sharedState.takeStaged() where services.updateValue(bytes, forKey: Self.sharedStatePrefix + name) != bytes {
            isChanged = true
        }
    }

    /// Where restorable shared values (`RestorableSharedStateKey`) sit among the services'
    /// bytes: no service name starts with a dot.
    static let sharedStatePrefix = ".shared/"

    /// Drops the bytes of services the host no longer runs (after a launch or a reload).
    mutating func forgetRemovedServices(keeping slots: [ServiceSlot]) {
        let names = Set(slots.map(\.name))
        for name in services.keys where !names.contains(name) && !name.hasPrefix(Self.sharedStatePrefix) {
            services[name] = nil
            isChanged = true
        }
    }

    /// The state to keep now: the services' bytes and the lifecycle (the last running state
    /// while terminating; while the machine sleeps, where its resume returns).
    func snapshot(_ machine: LifecycleStateMachine) -> RestorableState {
        let isInBackground = switch machine.sleep?.stateAfter ?? machine.state {
        case .background: true
        case .active: false
        case .notRunning, .launching, .inactive, .terminating: lastKept?.isInBackground ?? false
        }
        return RestorableState(
            generation: generation,
            isInBackground: isInBackground,
            isSessionLocked: !machine.isProtectedDataAvailable,
            sessionLockReason: machine.isProtectedDataAvailable ? "" : (machine.sessionLockReason ?? ""),
            services: services
        )
    }

    /// Keeps the state in the fast tier when it changed: called before a request's status goes
    /// out, so a kill right after it loses nothing.
    mutating func keep(_ machine: LifecycleStateMachine, slots: [ServiceSlot]) {
        guard let storage else { return }
        takeStaged(from: slots)
        var state = snapshot(machine)
        if let last = lastKept, !isChanged, last.hasSameLifecycle(as: state) { return }
        isChanged = false
        if let last = lastKept, last.hasSameContent(as: state) { return }
        guard state.encodedSize <= RestorableState.maximumEncodedSize else {
            // A copy no reader would take back: keep the last one that fits instead.
            let largest = state.services.max { $0.value.count < $1.value.count }
            let message = "restorable state of \(state.encodedSize) bytes is over the \(RestorableState.maximumEncodedSize)-byte limit; "
                + "the last copy that fit stays (largest: \(largest?.key ?? "?"), \(largest?.value.count ?? 0) bytes)"
            if message != lastFailure {
                logger.error("could not keep the restorable state: \(message)")
                lastFailure = message
            }
            return
        }
        generation += 1
        state.generation = generation
        lastKept = state
        do {
            try storage.keep(state)
            lastFailure = nil
        } catch {
            let message = "\(error)"
            if message != lastFailure {
                logger.error("could not keep the restorable state: \(message)")
                lastFailure = message
            }
        }
    }

    /// Hands the last kept state to storage to be made durable, and waits until it is.
    mutating func persistDurably() async {
        guard let storage, let state = lastKept else { return }
        lastPersisted = state
        await storage.persistDurably(state)
    }

    /// Hands the last kept state to the durable tier when it differs from what that holds and
    /// `always` (background, memory warning, terminate) or the lifecycle part changed.
    mutating func persist(always: Bool) {
        guard let storage, let state = lastKept else { return }
        if let last = lastPersisted {
            // Same generation, same content: a generation counts up only when the content changed.
            if last.generation == state.generation { return }
            let lifecycleChanged = last.isInBackground != state.isInBackground || last.isSessionLocked != state.isSessionLocked
            guard always || lifecycleChanged else { return }
        }
        lastPersisted = state
        storage.persist(state)
    }
}

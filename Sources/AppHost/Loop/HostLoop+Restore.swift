extension HostLoop {
    /// What the loop knows about restorable state: the services' bytes as they stand, and what
    /// was last handed to the storage's two tiers.
    struct RestorableBook {
        /// The services' bytes now, restored ones included until a service replaces them.
        var services: [String: [UInt8]] = [:]
        /// The last state kept (fd store) and persisted (disk); their generations count on.
        var lastKept: RestorableState?
        var lastPersisted: RestorableState?
        var generation: UInt64 = 0
        /// Bytes arrived since the last keep.
        var isChanged = false
        /// Services staged bytes the loop has not taken yet.
        var hasStaged = false
        /// The last keep failed with this message (logged once until it changes).
        var lastFailure: String?
    }

    /// Reads what the previous run kept: every service gets its bytes back; after an unclean
    /// exit the background comes back too (`options` says so), and the session lock: its
    /// reason is returned, for the launch to restore.
    mutating func restore(into options: inout LaunchOptions) -> String? {
        guard let storage = configuration.restorableState else { return nil }
        let logger = self.logger
        guard let state = storage.restore(warning: { logger.warning("restorable state not used: \($0)") }) else { return nil }
        restorable.generation = state.generation
        restorable.lastKept = state
        restorable.lastPersisted = state
        restorable.services = state.services
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

    /// Takes the bytes services staged; they are kept when the request ends. In registration
    /// order, so of two instances of one name (a reload's restart) the newer one wins.
    mutating func takeStagedRestorableState() {
        restorable.hasStaged = false
        guard outlet.hasStagedRestorableState.exchange(false, ordering: .sequentiallyConsistent) else { return }
        for index in services.indices {
            guard let bytes = services[index].stagedState.take() else { continue }
            if restorable.services.updateValue(bytes, forKey: services[index].name) != bytes {
                restorable.isChanged = true
            }
        }
        for (name, bytes) in sharedState.takeStaged() where restorable.services.updateValue(bytes, forKey: Self.sharedStatePrefix + name) != bytes {
            restorable.isChanged = true
        }
    }

    /// Where restorable shared values (`RestorableSharedStateKey`) sit among the services'
    /// bytes: no service name starts with a dot.
    static let sharedStatePrefix = ".shared/"

    /// Drops the bytes of services the host no longer runs (after a launch or a reload).
    mutating func forgetRestorableStateOfRemovedServices() {
        let names = Set(services.map(\.name))
        for name in restorable.services.keys where !names.contains(name) && !name.hasPrefix(Self.sharedStatePrefix) {
            restorable.services[name] = nil
            restorable.isChanged = true
        }
    }

    /// The state to keep now: the services' bytes and the lifecycle (the last running state
    /// while terminating; while the machine sleeps, where its resume returns).
    var restorableSnapshot: RestorableState {
        let isInBackground = switch machine.sleep?.stateAfter ?? machine.state {
        case .background: true
        case .active: false
        case .notRunning, .launching, .inactive, .terminating: restorable.lastKept?.isInBackground ?? false
        }
        return RestorableState(
            generation: restorable.generation,
            isInBackground: isInBackground,
            isSessionLocked: !machine.isProtectedDataAvailable,
            sessionLockReason: machine.isProtectedDataAvailable ? "" : (machine.sessionLockReason ?? ""),
            services: restorable.services
        )
    }

    /// Keeps the state in the fast tier when it changed: called before a request's status goes
    /// out, so a kill right after it loses nothing.
    mutating func keepRestorableState() {
        guard let storage = configuration.restorableState else { return }
        takeStagedRestorableState()
        var state = restorableSnapshot
        if let last = restorable.lastKept, !restorable.isChanged, last.hasSameLifecycle(as: state) { return }
        restorable.isChanged = false
        if let last = restorable.lastKept, last.hasSameContent(as: state) { return }
        guard state.encodedSize <= RestorableState.maximumEncodedSize else {
            // A copy no reader would take back: keep the last one that fits instead.
            let largest = state.services.max { $0.value.count < $1.value.count }
            let message = "restorable state of \(state.encodedSize) bytes is over the \(RestorableState.maximumEncodedSize)-byte limit; "
                + "the last copy that fit stays (largest: \(largest?.key ?? "?"), \(largest?.value.count ?? 0) bytes)"
            if message != restorable.lastFailure {
                logger.error("could not keep the restorable state: \(message)")
                restorable.lastFailure = message
            }
            return
        }
        restorable.generation += 1
        state.generation = restorable.generation
        restorable.lastKept = state
        do {
            try storage.keep(state)
            restorable.lastFailure = nil
        } catch {
            let message = "\(error)"
            if message != restorable.lastFailure {
                logger.error("could not keep the restorable state: \(message)")
                restorable.lastFailure = message
            }
        }
    }

    /// Hands the last kept state to storage to be made durable, and waits until it is.
    mutating func persistRestorableStateDurably() async {
        guard let storage = configuration.restorableState, let state = restorable.lastKept else { return }
        restorable.lastPersisted = state
        await storage.persistDurably(state)
    }

    /// Hands the last kept state to the durable tier when it differs from what that holds and
    /// `always` (background, memory warning, terminate) or the lifecycle part changed.
    mutating func persistRestorableState(always: Bool) {
        guard let storage = configuration.restorableState, let state = restorable.lastKept else { return }
        if let last = restorable.lastPersisted {
            // Same generation, same content: a generation counts up only when the content changed.
            if last.generation == state.generation { return }
            let lifecycleChanged = last.isInBackground != state.isInBackground || last.isSessionLocked != state.isSessionLocked
            guard always || lifecycleChanged else { return }
        }
        restorable.lastPersisted = state
        storage.persist(state)
    }
}

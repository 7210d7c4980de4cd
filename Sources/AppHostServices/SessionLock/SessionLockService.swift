#if canImport(Glibc)
import Glibc
#endif
import AppHost
import Logging
import Synchronization

/// Locks the session when the application goes to the background and unlocks it when it comes
/// back, like a phone's lock screen; and, where logind is followed, while the screen of the
/// session the daemon watches is locked (`ScreenLockDidChange`). The session is locked while
/// either rule says so, and unlocks only when neither does: a screen unlock never undoes a
/// background lock, nor a foreground a screen lock.
///
/// Locking wipes the in-memory secret and publishes `SessionLockDidChange`, which the host turns
/// into `applicationProtectedDataWillBecomeUnavailable`; unlocking re-reads the secret first and
/// stays locked (saying why in the log) when it cannot. The work happens in `run(_:)`, so hooks
/// return at once and the grace timer never holds up the host.
///
/// Its restorable state is one byte, 1 while locked: never the secret. After an unclean exit
/// the host launches into the locked session it was in, and this service then reads the secret
/// only when the session unlocks.
///
/// ```yaml
/// settings:
///   grace-period: 0s            # lock this long after entering background
///   credential: session-secret  # $CREDENTIALS_DIRECTORY/session-secret (LoadCredential=)
///   secret-file: /etc/apphostd/session-secret  # or this file; not both
/// ```
public final class SessionLockService: ApplicationService {
    /// The config's `type` for this service.
    public static let typeName = "session-lock"
    /// The keys its `settings:` section may hold.
    public static let settingKeys = ["grace-period", "credential", "secret-file"]
    /// One line for `apphostd services`.
    public static let summary = "Locks the session in the background (after a grace period), wipes the secret, drives protected-data events"

    enum Request: Sendable {
        case background
        case foreground
        case graceElapsed(generation: Int)
        case hostUnlocked
        case screen(locked: Bool)
        /// The machine is awake again (`MachineDidResume`).
        case resumed
    }

    struct State {
        var secret: SessionSecret?
        var isLocked = false
        var problem: String?
        /// The background rule: in the background (its lock may still wait for the grace period).
        var isInBackground = false
        /// The screen rule: the watched logind session's screen is locked.
        var isScreenLocked = false
        /// The background rule's lock waits for the grace period.
        var isLockPending = false

        /// Whether a rule says locked: the screen, or the background once its grace period ended.
        var aRuleSaysLocked: Bool { isScreenLocked || (isInBackground && !isLockPending) }

        /// Unlocked, with the secret read again; the last problem is gone.
        mutating func unlock(with secret: SessionSecret?) {
            self.secret = secret
            isLocked = false
            problem = nil
        }
    }

    /// How long after entering the background the session locks.
    let gracePeriod: Duration
    /// Where the secret comes from.
    let source: SecretSource
    private let environment: [String: String]?
    let state = Mutex(State())
    let requests: AsyncStream<Request>
    let requestSink: AsyncStream<Request>.Continuation

    /// Builds the service from its settings section.
    public convenience init(configuration: ServiceSection) throws(ConfigurationError) {
        try self.init(configuration: configuration, environment: nil)
    }

    /// Builds the service with `environment` instead of the process environment (for tests).
    init(configuration: ServiceSection, environment: [String: String]?) throws(ConfigurationError) {
        try configuration.requireOnlyKeys(Self.settingKeys)
        gracePeriod = try configuration.duration("grace-period") ?? .zero
        let credential = try configuration.string("credential")
        let file = try configuration.string("secret-file")
        switch (credential, file) {
        case (_?, _?):
            throw configuration.error("secret-file", "credential and secret-file are both set", hint: "keep exactly one of them")
        case (let name?, nil):
            guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                throw configuration.error("credential", "\"\(name)\" is not a credential name", hint: "the NAME of LoadCredential=NAME:PATH, without slashes")
            }
            source = .credential(name)
        case (nil, let path?):
            guard path.hasPrefix("/") else {
                throw configuration.error("secret-file", "\"\(path)\" is not an absolute path", hint: "write it like /etc/apphostd/session-secret")
            }
            source = .file(path)
        case (nil, nil):
            source = .none
        }
        self.environment = environment
        (requests, requestSink) = AsyncStream<Request>.makeStream(bufferingPolicy: .unbounded)
    }

    /// True while the service holds the secret in memory (for tests: false after a lock).
    var hasSecret: Bool {
        state.withLock { $0.secret?.count ?? 0 > 0 }
    }

    /// True while the service considers the session locked.
    var isLocked: Bool {
        state.withLock { $0.isLocked }
    }

    // MARK: Hooks

    /// Reads the secret; when it is unavailable the session starts locked (never a refusal).
    public func application(_ application: ApplicationHandle, willFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        if application.isSessionLocked {
            // Launched into a locked session (a reload restarted this service while locked, or a
            // restore after an unclean exit): the secret is read when the session unlocks, by
            // this service on the next foreground.
            state.withLock { $0.isLocked = true }
            keepLockState(application)
            return true
        }
        do {
            let secret = try source.load(environment: lookUp)
            state.withLock { $0.secret = secret }
        } catch {
            state.withLock { state in
                state.isLocked = true
                state.problem = error.description
            }
            application.logger.error("session starts locked: the secret \(error)", metadata: ["secret": "\(error.path)"])
        }
        keepLockState(application)
        return true
    }

    /// Locks now, within the host's background request (one `STATUS=` for both), or asks the
    /// run loop to lock after the grace period.
    public func applicationDidEnterBackground(_ application: ApplicationHandle) async throws {
        if gracePeriod <= .zero {
            state.withLock { $0.isInBackground = true }
            lock(application, reason: "entered background")
        } else {
            requestSink.yield(.background)
        }
    }

    /// Unlocks now, within the host's foreground request, or asks the run loop to cancel a
    /// pending lock and to unlock.
    public func applicationWillEnterForeground(_ application: ApplicationHandle) async throws {
        if gracePeriod <= .zero {
            state.withLock { $0.isInBackground = false }
            // With the screen locked the session stays so until the screen unlocks.
            unlock(application, reason: "entered foreground")
        } else {
            requestSink.yield(.foreground)
        }
    }

    /// The session locked, by this service or anyone else: the secret goes, and the next
    /// foreground re-reads it and unlocks.
    public func applicationProtectedDataWillBecomeUnavailable(_ application: ApplicationHandle) async throws {
        let secret = state.withLock { state -> SessionSecret? in
            state.isLocked = true
            defer { state.secret = nil }
            return state.secret
        }
        secret?.wipe()
    }

    /// Someone else unlocked the session: read the secret again.
    public func applicationProtectedDataDidBecomeAvailable(_ application: ApplicationHandle) async throws {
        requestSink.yield(.hostUnlocked)
    }

    /// Wipes the secret before the service goes.
    public func applicationWillTerminate(_ application: ApplicationHandle) async throws {
        let secret = state.withLock { state -> SessionSecret? in
            defer { state.secret = nil }
            return state.secret
        }
        secret?.wipe()
    }

    // MARK: Lock and unlock

    func lock(_ application: ApplicationHandle, reason: String, cause: String? = nil) {
        let outcome = state.withLock { state -> (changed: Bool, secret: SessionSecret?) in
            guard !state.isLocked else { return (false, nil) }
            state.isLocked = true
            defer { state.secret = nil }
            return (true, state.secret)
        }
        outcome.secret?.wipe()
        guard outcome.changed else { return }
        application.logger.info("session locked: \(reason)")
        application.bus.publish(SessionLockDidChange(isLocked: true, reason: reason, cause: cause))
        publishStatus(application, pending: false)
    }

    /// Unlocks unless a rule says locked: decided when the unlock is committed, under the same
    /// lock as the rules, so a hook and the run loop changing them at once cannot both win.
    /// Returns whether the session is unlocked now.
    @discardableResult
    func unlock(_ application: ApplicationHandle, reason: String, cause: String? = nil) -> Bool {
        guard isLocked else { return true }
        guard !state.withLock({ $0.aRuleSaysLocked }) else { return false }
        let secret: SessionSecret?
        switch loadSecret(application, failure: "session stays locked: the secret") {
        case .success(let loaded):
            secret = loaded
        case .failure(let error):
            // Still locked; the message carries why, for the host's status line.
            application.bus.publish(SessionLockDidChange(isLocked: true, reason: "secret unavailable: \(error.description)"))
            publishStatus(application, pending: false)
            return false
        }
        let committed = state.withLock { state -> Bool in
            guard state.isLocked, !state.aRuleSaysLocked else { return false }
            state.unlock(with: secret)
            return true
        }
        guard committed else {
            // A rule said locked in the meantime.
            secret?.wipe()
            return !isLocked
        }
        application.logger.info("session unlocked: \(reason)")
        application.bus.publish(SessionLockDidChange(isLocked: false, reason: reason, cause: cause))
        publishStatus(application, pending: false)
        return true
    }

    func reloadAfterExternalUnlock(_ application: ApplicationHandle) {
        guard isLocked else { return }
        if case .success(let secret) = loadSecret(application, failure: "the session was unlocked elsewhere, but the secret") {
            state.withLock { $0.unlock(with: secret) }
        }
        publishStatus(application, pending: false)
    }

    /// Reads the secret; on failure records the problem and logs `failure` followed by the
    /// reason.
    private func loadSecret(_ application: ApplicationHandle, failure: String) -> Result<SessionSecret?, SecretUnavailable> {
        do throws(SecretUnavailable) {
            return .success(try source.load(environment: lookUp))
        } catch {
            state.withLock { $0.problem = error.description }
            application.logger.error("\(failure) \(error)", metadata: ["secret": "\(error.path)"])
            return .failure(error)
        }
    }

    func publishStatus(_ application: ApplicationHandle, pending: Bool) {
        let snapshot = state.withLock { (isLocked: $0.isLocked, problem: $0.problem) }
        application.bus.publish(SessionLockStatus(isLocked: snapshot.isLocked, isLockPending: pending, problem: snapshot.problem))
        keepLockState(application)
    }

    /// The lock state as restorable state: 1 while locked.
    private func keepLockState(_ application: ApplicationHandle) {
        application.keepRestorableState([isLocked ? 1 : 0])
    }

    private func lookUp(_ name: String) -> String? {
        if let environment { return environment[name] }
        return getenv(name).map { String(cString: $0) }
    }
}

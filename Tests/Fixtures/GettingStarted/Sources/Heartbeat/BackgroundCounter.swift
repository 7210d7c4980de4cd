import AppHost
import Synchronization

/// Counts the host's entries into the background across runs: the count is restorable state,
/// so a crash, a SIGKILL or a restart loses none.
public final class BackgroundCounter: Sendable {
    /// Entries so far, this run's and the earlier runs'.
    public var entries: Int { count.withLock { $0 } }

    // State kept across hooks: a service sees its events one at a time, but not always on
    // the same thread, so it sits behind a Mutex, in a final class (a Mutex is not copied).
    private let count = Mutex(0)

    /// Takes no settings: any key under `settings:` is refused.
    public init(configuration: ServiceSection) throws(ConfigurationError) {
        try configuration.requireOnlyKeys([String]())
    }
}

extension BackgroundCounter: ApplicationService {
    public func application(_ app: ApplicationHandle, didFinishLaunchingWithOptions options: LaunchOptions) async throws -> Bool {
        let restored = options.restoredState.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        count.withLock { $0 = restored }
        return true
    }

    // Counted here, not in applicationDidEnterBackground: a launch into the background (after a
    // crash there) calls that one too, and is no new entry.
    public func applicationWillResignActive(_ app: ApplicationHandle) async throws {
        let entries = count.withLock { count in
            count += 1
            return count
        }
        app.keepRestorableState(Array(String(entries).utf8))
    }
}

import Logging
import Synchronization

/// The live log level and target shared by every `JournalLogHandler` that was not given its own
/// level, so a config reload or an operator (`systemctl service-log-level`, through
/// `LogControlEdge`) can change how every existing logger writes.
public final class LogLevelControl: Sendable {
    /// Where records go, as systemd's `LogTarget` names it.
    public enum Target: String, Sendable, CaseIterable {
        /// Journald's native protocol when stderr is the journal, else plain lines on stderr: what
        /// the daemon chose at start.
        case auto
        /// Journald's native protocol (structured fields), whatever stderr is.
        case journal
        /// Plain `<N>message key=value` lines on stderr (under systemd, the journal's stream:
        /// one `MESSAGE=` per line, no fields of its own).
        case console
        /// Nowhere.
        case null
    }

    /// The process-wide control the daemon's handlers read.
    public static let shared = LogLevelControl()

    private let storage: Atomic<UInt8>
    private let targetStorage = Atomic<UInt8>(0)
    /// The level the config file asked for last (`applyConfigured(_:)`), 255 before any.
    private let configured = Atomic<UInt8>(255)

    /// A separate control (tests, embedding); starts at `level`.
    public init(level: Logger.Level = .info) {
        storage = Atomic(Self.code(level))
    }

    /// The current level; read on every log call, so it is a single atomic load.
    public var level: Logger.Level {
        get { Self.level(storage.load(ordering: .relaxed)) }
        set { storage.store(Self.code(newValue), ordering: .relaxed) }
    }

    /// The current target; read on every log call, a single atomic load.
    public var target: Target {
        get { Target.allCases[Int(targetStorage.load(ordering: .relaxed))] }
        set { targetStorage.store(UInt8(Target.allCases.firstIndex(of: newValue)!), ordering: .relaxed) }
    }

    /// Applies the config file's `host.log-level` when it differs from what the file said last
    /// (at start, always): a reload of a file whose level did not change keeps the level an
    /// operator set at run time (`systemctl service-log-level`); a file that changes it wins.
    /// Returns whether the level was applied.
    @discardableResult
    public func applyConfigured(_ level: Logger.Level) -> Bool {
        let code = Self.code(level)
        guard configured.exchange(code, ordering: .acquiringAndReleasing) != code else { return false }
        self.level = level
        return true
    }

    private static func code(_ level: Logger.Level) -> UInt8 {
        UInt8(Logger.Level.allCases.firstIndex(of: level)!)
    }

    private static func level(_ code: UInt8) -> Logger.Level {
        Logger.Level.allCases[Int(code)]
    }
}

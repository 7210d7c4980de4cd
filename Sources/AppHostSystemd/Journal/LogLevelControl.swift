import Logging
import Synchronization

/// The live log level shared by every `JournalLogHandler` that was not given its own level,
/// so a config reload can change the level of loggers that already exist.
public final class LogLevelControl: Sendable {
    /// The process-wide control the daemon's handlers read.
    public static let shared = LogLevelControl()

    private let storage: Atomic<UInt8>

    /// A separate control (tests, embedding); starts at `level`.
    public init(level: Logger.Level = .info) {
        storage = Atomic(Self.code(level))
    }

    /// The current level; read on every log call, so it is a single atomic load.
    public var level: Logger.Level {
        get { Self.level(storage.load(ordering: .relaxed)) }
        set { storage.store(Self.code(newValue), ordering: .relaxed) }
    }

    private static func code(_ level: Logger.Level) -> UInt8 {
        UInt8(Logger.Level.allCases.firstIndex(of: level)!)
    }

    private static func level(_ code: UInt8) -> Logger.Level {
        Logger.Level.allCases[Int(code)]
    }
}

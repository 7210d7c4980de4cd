import AppHostSupport
/// Why the signal path could not be set up; its description says what to do about it.
///
/// A struct with a ``Code``, as swift-service-lifecycle's `ServiceGroupError`: a new code is not
/// a breaking change.
public struct LifecycleSignalError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case notBlocked, blockFailed, signalSourceFailed, readerFailed
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// These signals are not blocked in the thread creating the `SignalSource`.
        public static let notBlocked = Code(.notBlocked)
        /// `pthread_sigmask` failed.
        public static let blockFailed = Code(.blockFailed)
        /// The signal sources could not be added (`sd_event_add_signal`: its signalfd).
        public static let signalSourceFailed = Code(.signalSourceFailed)
        /// The edge's event loop, its wake-up eventfd or its thread could not be made.
        public static let readerFailed = Code(.readerFailed)

        /// The code's name.
        public var description: String {
            switch base {
            case .notBlocked: "notBlocked"
            case .blockFailed: "blockFailed"
            case .signalSourceFailed: "signalSourceFailed"
            case .readerFailed: "readerFailed"
            }
        }
    }

    /// What failed.
    public let code: Code
    /// The signals not blocked (``Code/notBlocked``); empty otherwise.
    public let signals: [Int32]
    /// The errno of the call that failed; nil for ``Code/notBlocked``.
    public let errno: Int32?

    private init(code: Code, signals: [Int32] = [], errno: Int32? = nil) {
        self.code = code
        self.signals = signals
        self.errno = errno
    }

    /// These signals are not blocked in the calling thread.
    public static func notBlocked(signals: [Int32]) -> Self { Self(code: .notBlocked, signals: signals) }
    /// `pthread_sigmask` failed with `errno`.
    public static func blockFailed(errno: Int32) -> Self { Self(code: .blockFailed, errno: errno) }
    /// `sd_event_add_signal` failed with `errno`.
    public static func signalSourceFailed(errno: Int32) -> Self { Self(code: .signalSourceFailed, errno: errno) }
    /// The event loop or its thread could not be made (`errno`).
    public static func readerFailed(errno: Int32) -> Self { Self(code: .readerFailed, errno: errno) }

    /// What failed and what to do.
    public var description: String {
        switch code {
        case .notBlocked:
            let names = signals.map(LifecycleSignal.name(of:)).joined(separator: ", ")
            return "lifecycle signals not blocked in the calling thread: \(names) "
                + "(block them before any thread exists: link CApphostdPrelude or call "
                + "LifecycleSignalMask.blockInCurrentThread() first thing in main)"
        case .blockFailed:
            return "pthread_sigmask failed: \(SystemErrorText.describe(errno ?? 0))"
        case .signalSourceFailed:
            return "sd_event_add_signal failed: \(SystemErrorText.describe(errno ?? 0))"
        default:
            return "could not start the signal reader: \(SystemErrorText.describe(errno ?? 0))"
        }
    }

    /// The errno's text alone, or the description when there is no errno.
    var reason: String {
        errno.map(SystemErrorText.describe) ?? description
    }
}

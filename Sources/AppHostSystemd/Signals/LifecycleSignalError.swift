/// Why the signal path could not be set up; each case says what to do about it.
public enum LifecycleSignalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// These signals are not blocked in the thread creating the `SignalSource`.
    case notBlocked(signals: [Int32])
    /// `pthread_sigmask` failed.
    case blockFailed(errno: Int32)
    /// The signal sources could not be added (`sd_event_add_signal`: its signalfd).
    case signalfdFailed(errno: Int32)
    /// The wake-up eventfd or the reader thread could not be created.
    case readerFailed(errno: Int32)

    public var description: String {
        switch self {
        case .notBlocked(let signals):
            let names = signals.map(LifecycleSignal.name(of:)).joined(separator: ", ")
            return "lifecycle signals not blocked in the calling thread: \(names) "
                + "(block them before any thread exists: link CApphostdPrelude or call "
                + "LifecycleSignalMask.blockInCurrentThread() first thing in main)"
        case .blockFailed(let errno):
            return "pthread_sigmask failed: \(SystemErrorText.describe(errno))"
        case .signalfdFailed(let errno):
            return "sd_event_add_signal failed: \(SystemErrorText.describe(errno))"
        case .readerFailed(let errno):
            return "could not start the signal reader: \(SystemErrorText.describe(errno))"
        }
    }
}

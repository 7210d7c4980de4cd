import CAppHostShims
import Glibc

/// Blocking the lifecycle signals, for programs that have no C prelude doing it before main.
///
/// A signal reaches a `signalfd` only while every thread blocks it; a thread that leaves it unblocked
/// gets the default action instead (for `SIGTERM` and real-time signals: death). Block in the main
/// thread before any other thread exists, because threads inherit the mask of the thread that made them.
public enum LifecycleSignalMask {
    /// Blocks the lifecycle signals in the calling thread and every thread it creates later.
    public static func blockInCurrentThread() throws(LifecycleSignalError) {
        let result = apphost_block_lifecycle_signals()
        guard result == 0 else { throw .blockFailed(errno: result) }
    }

    /// Whether every lifecycle signal is blocked in the calling thread.
    public static var areBlockedInCurrentThread: Bool { unblockedInCurrentThread.isEmpty }

    /// The lifecycle signals the calling thread does not block, for a precise error message.
    public static var unblockedInCurrentThread: [Int32] {
        LifecycleSignal.allSignalNumbers.filter { apphost_signal_is_blocked($0) != 1 }
    }
}

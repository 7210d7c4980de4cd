import CAppHostShims
import Glibc
import Synchronization
import SystemPackage

/// What a wake-up of the timer was.
package enum WallClockTimerReading: Sendable, Equatable {
    /// It reached the time it was armed for.
    case expired
    /// The wall clock was set (or the machine resumed) before that: `ECANCELED`.
    case cancelled
    /// Nothing to read (`EAGAIN`): a wake-up already handled.
    case nothing
}

/// The one timer the time-change source sleeps on. The daemon's is `RealtimeTimer`; tests give
/// one they can cancel, which a real timerfd cannot be without setting the clock.
package protocol WallClockTimer: AnyObject, Sendable {
    /// Polled for reading on the edge loop.
    var fd: Int32 { get }
    /// Arms it for `seconds` since 1970 on the wall clock, to be cancelled when the clock is
    /// set. False when the clock was set since the last read (`ECANCELED`): it is armed all the
    /// same, and the caller looks at the time again.
    func arm(at seconds: Int64) -> Bool
    /// Reads what woke the loop.
    func read() -> WallClockTimerReading
    /// Closes the fd.
    func close()
}

/// A `CLOCK_REALTIME` timerfd armed with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`, as PID 1
/// watches the clock (libsystemd 252 has no sd-event source for it).
package final class RealtimeTimer: WallClockTimer, @unchecked Sendable {
    package let fd: Int32
    private let isClosed = Atomic(false)

    /// - Throws: the errno of `timerfd_create`.
    package init() throws(Errno) {
        let fd = apphost_open_realtime_timerfd()
        guard fd >= 0 else { throw Errno(rawValue: -fd) }
        self.fd = fd
    }

    package func arm(at seconds: Int64) -> Bool {
        apphost_arm_realtime_timerfd(fd, seconds) != -ECANCELED
    }

    package func read() -> WallClockTimerReading {
        var expirations: UInt64 = 0
        let count = Glibc.read(fd, &expirations, MemoryLayout<UInt64>.size)
        if count == MemoryLayout<UInt64>.size { return .expired }
        return count < 0 && errno == ECANCELED ? .cancelled : .nothing
    }

    /// Closes the fd once (a timer made but never watched closes when dropped).
    package func close() {
        guard !isClosed.exchange(true, ordering: .relaxed) else { return }
        Glibc.close(fd)
    }

    deinit {
        close()
    }
}

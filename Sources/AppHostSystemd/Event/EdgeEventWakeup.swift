import CAppHostShims
import Glibc

/// An eventfd that wakes the edge's thread blocked in `sd_event_run` when Swift hands it work
/// (`EdgeEventLoop`), so the loop needs no timeout or timer.
///
/// The fd is closed only when the last owner (the source and its reader thread) lets go, so a late
/// `wake()` never writes into a reused descriptor.
final class EdgeEventWakeup: Sendable {
    /// The descriptor to add to the poll set with `POLLIN`.
    let fd: Int32

    /// Opens the eventfd; returns the errno on failure.
    init() throws(EdgeEventLoopError) {
        let fd = apphost_open_wake_eventfd()
        guard fd >= 0 else { throw EdgeEventLoopError(operation: "eventfd", code: errno) }
        self.fd = fd
    }

    /// Makes the fd readable; idempotent (the counter only grows).
    func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, $0.count) }
    }

    /// Makes the fd unreadable again, for a loop that goes on after a wake.
    func drain() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(fd, $0.baseAddress, $0.count) }
    }

    deinit { Glibc.close(fd) }
}

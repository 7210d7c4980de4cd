/// What the host tells whoever reports it to the outside, in the order it happened: the daemon's
/// sd_notify reporter turns these into `READY=1`, `STATUS=`, `RELOADING=1`, `STOPPING=1`,
/// `EXTEND_TIMEOUT_USEC=` and `ERRNO=`.
#if hasAttribute(nonexhaustive)
@nonexhaustive(warn)
#endif
public enum HostReport: Sendable, Hashable {
    /// The status after a request (at most one per request), or at the start of the launch.
    case status(HostStatus)
    /// A launch or terminate step finished and the next may take up to this long.
    case progress(next: Duration)
    /// The launch finished and the host is active, or a reload ended: `READY=1`.
    case ready(HostStatus)
    /// A reload began: `RELOADING=1`.
    case reloading(HostStatus)
    /// Terminate began, for the reason given (`SIGTERM`): `STOPPING=1`. Only `progress` and
    /// `stopped` follow.
    case stopping(reason: String)
    /// The launch failed (after its rollback); the daemon exits non-zero.
    case launchFailed(LaunchFailure, HostStatus)
    /// Every service got its last call; the host is `notRunning`.
    case stopped(HostStatus)
}

/// Published when the machine is awake again after a sleep the daemon followed (logind's
/// `PrepareForSleep(false)`), before the host returns to the state it had: analytics counts the
/// sleeps and the time asleep from it.
public struct MachineDidResume: Sendable, Hashable {
    /// From logind's `PrepareForSleep(true)` to its `PrepareForSleep(false)`, on a clock that
    /// counts the time asleep (`ContinuousClock`: `CLOCK_BOOTTIME` on Linux).
    public let asleep: Duration

    /// A resume after `asleep`.
    public init(asleep: Duration) {
        self.asleep = asleep
    }
}

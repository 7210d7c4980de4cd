/// A restart that waits, as the status shows it: the `count`th within `period`, of `intensity`
/// allowed (`2/5 in 60s`).
public struct RestartAttempt: Sendable, Hashable, CustomStringConvertible {
    /// Restarts within the period, this one included.
    public var count: Int
    /// How many the period allows before escalation.
    public var intensity: Int
    /// The window.
    public var period: Duration

    /// `2/5 in 60s`.
    public var description: String { "\(count)/\(intensity) in \(period.configText)" }
}

import AppHostSupport
extension MemoryPressureSource {
    /// The PSI triggers used when the source picks the pressure file itself (no
    /// `$MEMORY_PRESSURE_WATCH`): `some <warningStall> <window>` means warning,
    /// `full <criticalStall> <window>` means critical.
    ///
    /// Unprivileged processes may only use windows that are multiples of 2 s; the defaults
    /// (200 ms, 800 ms, 2 s) are accepted unprivileged on these machines.
    public struct Thresholds: Sendable, Equatable {
        /// Stall time within `window` during which some tasks waited for memory: a warning.
        public var warningStall: Duration
        /// Stall time within `window` during which all non-idle tasks waited for memory: critical.
        public var criticalStall: Duration
        /// The PSI tracking window.
        public var window: Duration

        /// Thresholds with the given stalls and window.
        public init(
            warningStall: Duration = .milliseconds(200),
            criticalStall: Duration = .milliseconds(800),
            window: Duration = .seconds(2)
        ) {
            self.warningStall = warningStall
            self.criticalStall = criticalStall
            self.window = window
        }

        /// 200 ms warning, 800 ms critical, in a 2 s window.
        public static let `default` = Thresholds()

        /// The trigger text for the warning level, e.g. "some 200000 2000000".
        public var warningTrigger: String {
            "some \(warningStall.wholeMicroseconds) \(window.wholeMicroseconds)"
        }

        /// The trigger text for the critical level, e.g. "full 800000 2000000".
        public var criticalTrigger: String {
            "full \(criticalStall.wholeMicroseconds) \(window.wholeMicroseconds)"
        }
    }
}

import AppHost
import AppHostSupport

extension SystemdIntegration {
    /// Which parts of the edge run, and what they need. The defaults are the daemon's: every
    /// part on, each saying once in the log when the machine does not offer it.
    public struct Options: Sendable {
        /// The program's name: the inhibitors' "who", the bus name's last part
        /// (`org.apphost.NAME`) and LogControl1's `SyslogIdentifier`.
        public var name: String
        /// Where `READY=1`, `STATUS=` and the watchdog's pings go.
        public var notifier = SystemdNotifier()
        /// `STATUS=` while a reload runs.
        public var reloadStatus = "reloading"
        /// What SIGHUP does; nil: the log says the program has no reload.
        public var reload: (@Sendable (PluggableApplicationHost) async -> Void)?
        /// What Host1's `Reload()` does: whether it applied, and what it says; nil: it answers
        /// `NotSupported`.
        public var busReload: (@Sendable (PluggableApplicationHost) async -> (applied: Bool, message: String))?
        /// The watchdog's settings (`WatchdogSettings.fromEnvironment()`); nil: no pings.
        public var watchdog: WatchdogSettings?
        /// Memory pressure's thresholds; nil: not watched.
        public var memoryPressure: MemoryPressureSource.Thresholds? = .default
        /// Where `$MEMORY_PRESSURE_WATCH` and its kin are read.
        public var environment: [String: String] = AppHostSupport.ProcessEnvironment.current
        /// The restorable state's files: their writer runs before the host, so it writes the
        /// host's last state; nil: none (the host's own storage, if any, is used as it is).
        public var restorableState: RestorableStateFiles?
        /// The node_exporter textfile: before the host, so it writes the host's last figures.
        public var metrics: MetricsTextfileEdge?
        /// The name to own on the bus (LogControl1 and Host1); nil: no bus server.
        public var busName: String?
        /// Whether logind's sleep and shutdown are followed.
        public var followsLogind = true
        /// Whether significant time changes (the clock set, the zone, midnight, daylight saving)
        /// reach the services (`TimeChangeEdge`).
        public var followsTimeChanges = true
        /// Where the network path is read (`NetworkPathEdge`); nil: not followed, and it stays
        /// unknown.
        public var networkPathSource: NetworkPathSource? = .automatic
        /// Whether the power state (low power mode, the battery) is followed (`PowerStateEdge`).
        public var followsPowerState = true
        /// Whose screen lock is followed, with logind; nil: none.
        public var logindSession: LogindEdge.WatchedSession? = .auto

        /// Every part on, named `name` (its bus name `org.apphost.NAME`).
        public init(name: String) {
            self.name = name
            self.busName = LogControlEdge.busName(commandName: name)
        }
    }
}

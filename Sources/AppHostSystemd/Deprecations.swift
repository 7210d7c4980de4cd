import AppHost
import AppHostSupport
import Logging

// Names and signatures of earlier releases, kept for one release so that code written against
// them still builds, with a warning that names the new one. Every deprecation of the module is
// here. The edge's swift-service-lifecycle Services end in `Edge`, so that a name ending in
// `Service` is always a plug-in (`ApplicationService`).

/// Blocking the lifecycle signals.
@available(*, deprecated, renamed: "LifecycleSignalMask")
public typealias LifecycleSignals = LifecycleSignalMask

/// The launch state kept in files in the state directory.
@available(*, deprecated, renamed: "LaunchStateFiles")
public typealias LaunchStateStore = LaunchStateFiles

/// Renamed `SystemdNotifyEdge`.
@available(*, deprecated, renamed: "SystemdNotifyEdge")
public typealias SystemdNotifyService = SystemdNotifyEdge

/// Renamed `WatchdogEdge`.
@available(*, deprecated, renamed: "WatchdogEdge")
public typealias WatchdogService = WatchdogEdge

/// Renamed `LifecycleSignalEdge`.
@available(*, deprecated, renamed: "LifecycleSignalEdge")
public typealias LifecycleSignalService = LifecycleSignalEdge

/// Renamed `MemoryPressureEdge`.
@available(*, deprecated, renamed: "MemoryPressureEdge")
public typealias MemoryPressureService = MemoryPressureEdge

/// Renamed `LogControlEdge`.
@available(*, deprecated, renamed: "LogControlEdge")
public typealias LogControlService = LogControlEdge

/// Renamed `MetricsTextfileEdge`.
@available(*, deprecated, renamed: "MetricsTextfileEdge")
public typealias MetricsTextfile = MetricsTextfileEdge

/// Renamed `RestorableStateFileEdge`.
@available(*, deprecated, renamed: "RestorableStateFileEdge")
public typealias RestorableStateWriter = RestorableStateFileEdge

extension LogControlEdge {
    /// Which bus: now one type for every bus the edge speaks on.
    @available(*, deprecated, renamed: "AppHostSystemd.DBusAddress")
    public typealias DBusAddress = AppHostSystemd.DBusAddress
}

extension LogindEdge {
    /// As `init(host:who:logger:session:)`: the sleep's request itself now waits for the disk,
    /// so `save` is not called.
    @available(*, deprecated, message: "the sleep's request waits for the disk itself: leave out save:")
    public init(host: PluggableApplicationHost, who: String, logger: Logger, session: WatchedSession? = .auto, save: @escaping @Sendable () async -> Void) {
        self.init(host: host, who: who, logger: logger, on: nil, session: session)
    }
}

/// Moved to AppHostSupport, which the built-in services share with the edge.
@available(*, deprecated, message: "import AppHostSupport: StateDirectoryLock moved there")
public typealias StateDirectoryLock = AppHostSupport.StateDirectoryLock

/// Moved to AppHostSupport, which the built-in services share with the edge.
@available(*, deprecated, message: "import AppHostSupport: ProcessEnvironment moved there")
public typealias ProcessEnvironment = AppHostSupport.ProcessEnvironment

// The edge's swift-service-lifecycle Services end in `Edge`, so that a name ending in `Service`
// is always a plug-in (`ApplicationService`). The old names are kept for one release.

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

// Names of the previous release, kept for one release so that code written against it still
// builds (with a warning that names the new one).

/// Blocking the lifecycle signals.
@available(*, deprecated, renamed: "LifecycleSignalMask")
public typealias LifecycleSignals = LifecycleSignalMask

/// The launch state kept in files in the state directory.
@available(*, deprecated, renamed: "LaunchStateFiles")
public typealias LaunchStateStore = LaunchStateFiles

/// Where the application stands in its lifecycle, mirroring `UIApplication.State` plus the
/// bracketing states a daemon has (`notRunning`, `launching`, `terminating`).
public enum ApplicationState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not launched yet, or terminated.
    case notRunning
    /// The launch hooks are running.
    case launching
    /// In the foreground and receiving events.
    case active
    /// Between active and background, either way.
    case inactive
    /// In the background: flushed, locked, quiet.
    case background
    /// `willTerminate` is going out; nothing else follows.
    case terminating

    /// True while services are launched and may receive events.
    public var isRunning: Bool {
        switch self {
        case .launching, .active, .inactive, .background: true
        case .notRunning, .terminating: false
        }
    }

    public var description: String { rawValue }
}

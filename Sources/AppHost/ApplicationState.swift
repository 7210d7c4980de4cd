/// Where the application stands in its lifecycle, mirroring `UIApplication.State` plus the
/// bracketing states a daemon has (`notRunning`, `launching`, `terminating`).
public enum ApplicationState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case notRunning
    case launching
    case active
    case inactive
    case background
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

/// Whether the machine can reach the network, as Apple's `NWPath` tells an app: the host keeps
/// the newest one its source reported (`ApplicationHandle.networkPath`) and tells every service
/// when it changes (`applicationNetworkDidChange`).
public struct NetworkPath: Sendable, Hashable, CustomStringConvertible {
    /// Whether a route out is there.
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// A route out (networkd's `routable`, NetworkManager's connected-global).
        case available
        /// No route out.
        case unavailable
        /// No source says: never taken for offline.
        case unknown
    }

    /// Whether a route out is there.
    public var status: Status
    /// Whether the path costs (a metered connection): hold what can wait.
    public var isExpensive: Bool

    /// What the host knows before a source said anything.
    public static let unknown = NetworkPath(status: .unknown)

    /// A path of `status`, expensive or not.
    public init(status: Status, isExpensive: Bool = false) {
        self.status = status
        self.isExpensive = isExpensive
    }

    /// `available`, `available, expensive`, `unavailable`, `unknown`.
    public var description: String {
        status.rawValue + (isExpensive ? ", expensive" : "")
    }
}

/// The host's network path, in its shared state: read live through any handle.
enum NetworkPathKey: SharedStateKey {
    static let defaultValue = NetworkPath.unknown
}

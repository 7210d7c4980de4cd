import AppHost

/// Where the daemon reads the network path: NetworkManager or systemd-networkd, over the system
/// bus. D-Bus is a local socket, so this works under the unit's `PrivateNetwork=yes`, where the
/// daemon's own view of the links is its loopback only.
public enum NetworkPathSource: String, Sendable, Hashable, CaseIterable {
    /// NetworkManager when it is on the bus, else systemd-networkd (GLib's order).
    case automatic = "auto"
    /// systemd-networkd's `OperationalState`: `routable` is available.
    case networkd
    /// NetworkManager's `State`, `Connectivity` and `Metered`.
    case networkManager = "networkmanager"

    static let networkManagerObject = BusPropertyWatch.Object(
        name: "org.freedesktop.NetworkManager", path: "/org/freedesktop/NetworkManager", interface: "org.freedesktop.NetworkManager",
        properties: ["State", "Connectivity", "Metered"]
    )
    static let networkdObject = BusPropertyWatch.Object(
        name: "org.freedesktop.network1", path: "/org/freedesktop/network1", interface: "org.freedesktop.network1.Manager", properties: ["OperationalState"]
    )

    /// The objects followed, in the order `reading(previous:_:)` reads them.
    var objects: [BusPropertyWatch.Object] {
        switch self {
        case .automatic: [Self.networkManagerObject, Self.networkdObject]
        case .networkd: [Self.networkdObject]
        case .networkManager: [Self.networkManagerObject]
        }
    }

    /// The daemons named in the log.
    package var sources: String {
        switch self {
        case .automatic: "NetworkManager or systemd-networkd"
        case .networkd: "systemd-networkd"
        case .networkManager: "NetworkManager"
        }
    }

    /// The path from the followed objects' properties: the first source on the bus decides.
    func reading(previous: NetworkPath, _ properties: [[String: BusPropertyWatch.Value]?]) -> BusConditionClient<NetworkPath>.Reading {
        for (object, values) in zip(objects, properties) {
            guard let values else { continue }
            if object == Self.networkManagerObject { return Self.networkManager(values, previous: previous) }
            return Self.networkd(values)
        }
        return .init(value: .unknown, source: nil, detail: "no source")
    }

    /// `routable` is available (GLib's networkd monitor decides so; `OnlineState` counts
    /// link-local links as online). networkd knows nothing of metering.
    static func networkd(_ values: [String: BusPropertyWatch.Value]) -> BusConditionClient<NetworkPath>.Reading {
        guard case .string(let state)? = values["OperationalState"] else {
            return .init(value: .unknown, source: "systemd-networkd", detail: "no OperationalState")
        }
        return .init(value: NetworkPath(status: state == "routable" ? .available : .unavailable), source: "systemd-networkd", detail: "OperationalState \(state)")
    }

    /// `CONNECTED_GLOBAL` (70) with a connectivity that is not none, a portal or limited is
    /// available; `ASLEEP` (10), which NetworkManager says at every suspend, keeps the status;
    /// `Metered` yes (1) or guess-yes (3) is expensive.
    static func networkManager(_ values: [String: BusPropertyWatch.Value], previous: NetworkPath) -> BusConditionClient<NetworkPath>.Reading {
        guard case .uint32(let state)? = values["State"] else {
            return .init(value: .unknown, source: "NetworkManager", detail: "no State")
        }
        var connectivity: UInt32 = 0
        if case .uint32(let value)? = values["Connectivity"] { connectivity = value }
        var metered: UInt32 = 0
        if case .uint32(let value)? = values["Metered"] { metered = value }
        let detail = "State \(state), Connectivity \(connectivity), Metered \(metered)"
        let status: NetworkPath.Status
        switch state {
        case 10: status = previous.status
        case 0: status = .unknown
        case 70 where ![1, 2, 3].contains(connectivity): status = .available
        default: status = .unavailable
        }
        return .init(value: NetworkPath(status: status, isExpensive: metered == 1 || metered == 3), source: "NetworkManager", detail: detail)
    }
}

import AppHost
import Logging
import ServiceLifecycle

/// The network path as host requests, as a `Service`: NetworkManager's or systemd-networkd's
/// word, followed on the system bus without starting either (`NetworkPathSource`). Each change
/// is a journal line and a request with cause `network`; while one runs, a newer value replaces
/// the ones before it. Without a source the path stays unknown, and the log says so once.
public struct NetworkPathEdge: Service {
    let host: PluggableApplicationHost
    let source: NetworkPathSource
    let loop: EdgeEventLoop
    let logger: Logger
    /// Where the sources are: the system bus, but for tests.
    let bus: DBusAddress

    /// Follows `source` on `loop`'s connection to `bus`.
    package init(host: PluggableApplicationHost, source: NetworkPathSource, logger: Logger, on loop: EdgeEventLoop, bus: DBusAddress = .system) {
        self.host = host
        self.source = source
        self.loop = loop
        self.logger = logger
        self.bus = bus
    }

    /// Follows the path until graceful shutdown or cancellation.
    public func run() async {
        var told = NetworkPath.unknown
        await BusConditionClient<NetworkPath>.follow(
            name: "the network path", sources: source.sources, unknown: .unknown, objects: source.objects, bus: bus, on: loop, logger: logger,
            combine: { [source] previous, properties in source.reading(previous: previous, properties) }
        ) { reading in
            guard reading.value != told else { return }
            told = reading.value
            logger.info("the network is \(reading.value) (\(reading.source ?? "no source"): \(reading.detail))", metadata: ["cause": "network", "network": "\(reading.value.status.rawValue)", "expensive": "\(reading.value.isExpensive)"])
            await host.updateNetworkPath(reading.value)
        }
    }
}

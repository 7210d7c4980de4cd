import AppHost
import Logging
import ServiceLifecycle

/// The power state as host requests, as a `Service`: low power mode from
/// power-profiles-daemon, the battery from UPower, followed on the system bus without starting
/// either (`PowerStateSource`). Each change is a journal line and a request with cause `power`;
/// while one runs, a newer value replaces the ones before it. Without a source the state stays
/// unknown, and the log says so once.
public struct PowerStateEdge: Service {
    let host: PluggableApplicationHost
    let loop: EdgeEventLoop
    let logger: Logger
    /// Where the sources are: the system bus, but for tests.
    let bus: DBusAddress

    /// Follows the sources on `loop`'s connection to `bus`.
    package init(host: PluggableApplicationHost, logger: Logger, on loop: EdgeEventLoop, bus: DBusAddress = .system) {
        self.host = host
        self.loop = loop
        self.logger = logger
        self.bus = bus
    }

    /// Follows the state until graceful shutdown or cancellation.
    public func run() async {
        var told = PowerState.unknown
        await BusConditionClient<PowerState>.follow(
            name: "the power state", sources: PowerStateSource.sources, unknown: .unknown, objects: PowerStateSource.objects, bus: bus, on: loop, logger: logger,
            combine: { _, properties in PowerStateSource.reading(properties) }
        ) { reading in
            guard reading.value != told else { return }
            told = reading.value
            logger.info("the power state is \(reading.value) (\(reading.source ?? "no source"): \(reading.detail))", metadata: [
                    "cause": "power", "low_power": "\(reading.value.isLowPowerModeEnabled)", "on_battery": "\(reading.value.isOnBattery)",
                    "battery": "\(reading.value.batteryWarningLevel.rawValue)",
                ])
            await host.updatePowerState(reading.value)
        }
    }
}

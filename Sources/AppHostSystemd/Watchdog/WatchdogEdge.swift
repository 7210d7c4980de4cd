import AppHost
import ServiceLifecycle

/// The systemd watchdog as a `Service`: `WATCHDOG=1` at half the interval, sent from the host's
/// loop and only while the host is healthy (`HostStatus.healthProblem` is nil), so a host whose
/// loop is stuck, or whose required service is stuck in a hook past its stall limit, stops
/// pinging and systemd restarts it. (`SystemdNotifyEdge` sends `WATCHDOG=trigger` the moment
/// the host turns unhealthy.) Without a watchdog it only waits for the group to shut down: an
/// idle daemon has no timer of its own.
public struct WatchdogEdge: Service {
    let host: PluggableApplicationHost
    let settings: WatchdogSettings?
    let notifier: SystemdNotifier

    /// Pings as `settings` say (nil: no watchdog), through `notifier`.
    public init(host: PluggableApplicationHost, settings: WatchdogSettings?, notifier: SystemdNotifier) {
        self.host = host
        self.settings = settings
        self.notifier = notifier
    }

    /// Pings until the group shuts down.
    public func run() async {
        guard let settings else {
            try? await gracefulShutdown()
            return
        }
        let notifier = self.notifier
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await Task.sleep(for: settings.pingInterval) } catch { return }
                await host.onLoop { [host] in
                    if host.status.healthProblem == nil { notifier.watchdogPing() }
                }
            }
        }
    }
}

import AppHost
import AppHostSupport
import Logging
import ServiceLifecycle
import SystemPackage

/// Significant time changes as host requests, as a `Service`: the clock set, the time zone
/// changed, midnight, a change of daylight saving time (see `TimeChangeSource`). Each change
/// is a journal line that names it and a request whose cause says what changed; changes that
/// come while one waits merge into it.
public struct TimeChangeEdge: Service {
    let host: PluggableApplicationHost
    let source: TimeChangeSource?
    let loop: EdgeEventLoop
    let logger: Logger

    /// Watches on `loop`; `environment`'s `$TZ`, when set, decides the zone, and
    /// `/etc/localtime` is then not watched. `clock` and `timer` are the machine's unless a test
    /// gives its own.
    package init(
        host: PluggableApplicationHost, logger: Logger, on loop: EdgeEventLoop, environment: [String: String],
        clock: any WallClock = SystemWallClock(), timer: (any WallClockTimer)? = nil, zonePath: String = "/etc/localtime"
    ) {
        self.host = host
        self.loop = loop
        self.logger = logger
        do throws(Errno) {
            let chosen: any WallClockTimer = if let timer { timer } else { try RealtimeTimer() }
            source = TimeChangeSource(clock: clock, timer: chosen, zonePath: environment["TZ"] == nil ? zonePath : nil, logger: logger)
        } catch {
            logger.warning("time changes are not followed: no timerfd: \(SystemErrorText.describe(error.rawValue))")
            source = nil
        }
    }

    /// What the start line says: what the zone is read from.
    package var summary: String {
        guard let source else { return "off (no timerfd)" }
        return "the clock, midnight and \(source.zoneSource)"
    }

    /// Turns each change into a request until the group shuts down; a request is queued before
    /// the next change is read, so a change that comes while one waits merges into it.
    public func run() async {
        guard let source else { return }
        do {
            try loop.add(source)
        } catch {
            logger.warning("time changes are not followed: \(SystemErrorText.describe(error.rawValue))")
            return
        }
        defer { loop.remove(source) }
        await withDiscardingTaskGroup { requests in
            // The shutdown ends the changes (as MemoryPressureEdge's, without a merge's tasks).
            await withGracefulShutdownHandler {
                for await change in source.changes {
                    var metadata: Logger.Metadata = ["cause": "\(change.causes)"]
                    if let moved = change.moved { metadata["moved_us"] = "\(moved / 1000)" }
                    logger.notice("\(change.message)", metadata: metadata)
                    requests.addImmediateTask {
                        do {
                            try await host.receiveSignificantTimeChange(change.causes)
                        } catch {
                            logger.debug("time change (\(change.causes)) not told: \(error)")
                        }
                    }
                }
            } onGracefulShutdown: { [source] in
                source.endChanges()
            }
        }
    }
}

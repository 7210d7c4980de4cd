import AppHostSupport
import Logging
import ServiceLifecycle

extension BusConditionClient {
    /// Follows the condition on `bus`'s connection (the daemon's one per bus) until graceful
    /// shutdown or cancellation, handing each reading to `apply` in order; while `apply` runs,
    /// newer readings replace each other.
    static func follow(
        name: String, sources: String, unknown: Value, objects: [BusPropertyWatch.Object], bus: DBusAddress, on loop: EdgeEventLoop, logger: Logger,
        combine: @escaping (_ previous: Value, _ properties: [[String: BusPropertyWatch.Value]?]) -> Reading,
        apply: (Reading) async -> Void
    ) async {
        let (readings, sink) = AsyncStream<Reading>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let client = BusConditionClient(name: name, sources: sources, unknown: unknown, objects: objects, logger: logger, readings: sink, combine: combine)
        let member = DBusConnection.Member(setUp: client.setUp, onEvent: client.connectionChanged, leave: { _ in client.leave() })
        client.member = member
        let connection: DBusConnection
        do {
            connection = try DBusConnection.join(bus, member: member, on: loop, endsLoop: false)
        } catch {
            logger.notice("\(name) is not followed: no system bus (\(SystemErrorText.reason(error.rawValue))); it stays unknown")
            return
        }
        await withTaskCancellationOrGracefulShutdownHandler {
            for await reading in readings { await apply(reading) }
        } onCancelOrGracefulShutdown: {
            loop.perform {
                client.finish()
                connection.leave(member)
            }
            // Also when the loop is closed already and drops the work above.
            sink.finish()
        }
    }
}

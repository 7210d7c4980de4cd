import AppHostSupport
import Logging

/// One condition of the machine read from daemons on the system bus (the network path, the
/// power state): the objects it follows with `BusPropertyWatch`, and how their properties make
/// its value. Each new value goes to the Swift side through a stream that keeps the newest only,
/// so a source that flaps while a request runs gives one value, the last.
///
/// It says once, in the log, that no source is there, that one came or went, and which one the
/// value comes from. Touched on the loop's thread only.
final class BusConditionClient<Value: Sendable & Equatable>: @unchecked Sendable {
    /// A value, where it came from (nil: no source), and what it was made of.
    struct Reading: Sendable, Equatable {
        let value: Value
        let source: String?
        let detail: String
    }

    /// What the condition is called in the log ("the network path").
    let name: String
    /// The daemons it may come from, named for the log ("NetworkManager or systemd-networkd").
    let sources: String
    let watches: [BusPropertyWatch]
    /// The value while nothing is known.
    let unknown: Value
    private let combine: (_ previous: Value, _ properties: [[String: BusPropertyWatch.Value]?]) -> Reading
    private let readings: AsyncStream<Reading>.Continuation
    private let logger: Logger
    /// Its place on the system bus's connection; set before it joins.
    weak var member: DBusConnection.Member?
    private var last: Reading?
    /// Whether the log said that no source is there, since one last was.
    private var saidNone = false
    private var isFinished = false
    /// The watch whose change came last: why a source went is its reason.
    private var lastChanged: BusPropertyWatch?

    /// `combine` makes the value from each object's properties, in `objects`' order (nil: that
    /// name has no owner), and the value before.
    init(
        name: String, sources: String, unknown: Value, objects: [BusPropertyWatch.Object], logger: Logger, readings: AsyncStream<Reading>.Continuation,
        combine: @escaping (_ previous: Value, _ properties: [[String: BusPropertyWatch.Value]?]) -> Reading
    ) {
        self.name = name
        self.sources = sources
        self.logger = logger
        self.readings = readings
        self.combine = combine
        self.unknown = unknown
        watches = objects.map(BusPropertyWatch.init)
        // The watches call back into the client, which owns them.
        for watch in watches {
            watch.onChange = { [unowned self] watch in
                lastChanged = watch
                recompute()
            }
            watch.onAnswer = { [unowned self] in member?.markEstablished() }
        }
    }

    /// The matches and reads on a new connection: 0 or a negative errno.
    func setUp(_ bus: OpaquePointer) -> Int32 {
        for watch in watches {
            let result = watch.setUp(bus)
            guard result >= 0 else { return result }
        }
        return 0
    }

    /// What became of the system bus's connection.
    func connectionChanged(_ event: DBusConnection.Event) {
        switch event {
        case .lost, .reconnectFailed:
            // The next connection reads everything again; until then the value stands.
            break
        case .endedBeforeEstablished(let reason), .gaveUp(let reason):
            for watch in watches { watch.markUnreadable("no system bus (\(reason))") }
            recompute()
        }
    }

    /// Takes the matches off the connection.
    func leave() {
        for watch in watches { watch.leave() }
    }

    /// The daemon ends.
    func finish() {
        isFinished = true
        leave()
        readings.finish()
    }

    /// After any answer or change: once every object answered, the value, and what the log says.
    private func recompute() {
        guard !isFinished, watches.allSatisfy(\.hasAnswered) else { return }
        let reading = combine(last?.value ?? unknown, watches.map(\.values))
        defer { last = reading }
        if last == nil || reading.source != last?.source {
            report(reading.source, before: last?.source)
        }
        if reading != last {
            readings.yield(reading)
        }
    }

    private func report(_ source: String?, before: String?) {
        switch (before, source) {
        case (nil, let now?):
            logger.log(level: saidNone ? .notice : .info, "following \(name) from \(now)")
            saidNone = false
        case (let gone?, let now?):
            logger.notice("\(name) now comes from \(now) (not \(gone))")
        case (let gone?, nil):
            let why = (lastChanged?.missingReason ?? watches.compactMap(\.missingReason).first).map { " (\($0))" } ?? ""
            logger.notice("\(gone) is gone\(why): \(name) is unknown until \(sources) is on the system bus")
            saidNone = true
        case (nil, nil):
            guard !saidNone else { return }
            logger.info("no source of \(name) on the system bus (\(sources)): it stays unknown until one comes")
            saidNone = true
        }
    }
}

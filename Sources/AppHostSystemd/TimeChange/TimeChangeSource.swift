import AppHost
import AppHostSupport
import CAppHostShims
import CSystemd
import Glibc
import Logging

/// The machine's significant time changes, as PID 1 sees them, on the edge loop and without a
/// timer of its own but the one at the next boundary: a `CLOCK_REALTIME` timer that a set clock
/// (or a resume) cancels, armed for the earlier of the next local midnight and the zone's next
/// change of offset; and, unless `$TZ` decides the zone, an inotify watch on `/etc/localtime`.
/// The clock and the timer are the caller's (tests move and cancel their own).
package final class TimeChangeSource: EdgeEventClient, @unchecked Sendable {
    /// One element per change; a slow consumer sees the newest 16. Ends when the source leaves
    /// the loop.
    package let changes: AsyncStream<TimeChangeDetector.Change>
    /// What the zone is watched through, for the start line: `/etc/localtime`, or why not.
    package let zoneSource: String

    private let continuation: AsyncStream<TimeChangeDetector.Change>.Continuation
    private let timer: any WallClockTimer
    private let clock: any WallClock
    private let zonePath: String?
    private let logger: Logger
    /// Loop thread only, from here on.
    private var detector: TimeChangeDetector
    private var timerSource: OpaquePointer?
    private var zoneWatch: OpaquePointer?

    /// - Parameters:
    ///   - zonePath: the file that decides the zone (`/etc/localtime`); nil: not watched (`$TZ`
    ///     decides it).
    package init(clock: any WallClock, timer: any WallClockTimer, zonePath: String?, logger: Logger) {
        (changes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
        self.clock = clock
        self.timer = timer
        self.zonePath = zonePath
        self.logger = logger
        detector = TimeChangeDetector(clock: clock, zone: clock.reloadZone())
        zoneSource = zonePath ?? "$TZ (the zone is the environment's, which glibc reads once: nothing to watch)"
    }

    package func attach(to event: OpaquePointer) -> Int32 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let added = sd_event_add_io(event, &timerSource, timer.fd, UInt32(EPOLLIN.rawValue), { _, _, _, userdata in
            Unmanaged<TimeChangeSource>.fromOpaque(userdata!).takeUnretainedValue().timerWoke()
            return 0
        }, context)
        guard added >= 0 else { return -added }
        if let zonePath { watchZone(zonePath, on: event) }
        // The day, the zone and the clocks from now on, with the watches in place: a change
        // before this (during the launch) is in the starting point, not lost between the two.
        detector = TimeChangeDetector(clock: clock, zone: clock.reloadZone())
        arm()
        return 0
    }

    /// Ends `changes` from any thread (a graceful shutdown); the loop's part ends in `finish()`.
    package func endChanges() {
        continuation.finish()
    }

    package func finish() {
        if let timerSource { sd_event_source_disable_unref(timerSource) }
        if let zoneWatch { sd_event_source_disable_unref(zoneWatch) }
        (timerSource, zoneWatch) = (nil, nil)
        timer.close()
        continuation.finish()
    }

    /// The timer was cancelled or went off: what changed, then the next boundary, armed before
    /// the change is told.
    private func timerWoke() {
        guard timer.read() != .nothing else { return }
        let change = detector.timerWoke()
        tell([change] + arm())
    }

    /// Arms the timer for the next boundary. A clock set between the read and the arm fails
    /// the arm with `ECANCELED` (timerfd_create(2)), though it armed: look again, and arm again
    /// for the boundary of the new time. Returns what that look found.
    @discardableResult
    private func arm() -> [TimeChangeDetector.Change?] {
        var found: [TimeChangeDetector.Change?] = []
        for _ in 0..<3 {
            if timer.arm(at: detector.nextBoundary()) { return found }
            found.append(detector.timerWoke())
        }
        // A clock set over and over: armed for the newest look's boundary all the same.
        _ = timer.arm(at: detector.nextBoundary())
        return found
    }

    private func tell(_ changes: [TimeChangeDetector.Change?]) {
        for case let change? in changes { continuation.yield(change) }
    }

    /// Watches the zone's file itself (the link, not what it points to), or its directory
    /// while it is missing; every event watches anew, since a replaced file is a new inode. The
    /// old watch goes only once the new one is there (PID 1's order): a failure keeps it.
    private func watchZone(_ path: String, on event: OpaquePointer) {
        var watch: OpaquePointer?
        let context = Unmanaged.passUnretained(self).toOpaque()
        let handler: sd_event_inotify_handler_t = { source, _, userdata in
            Unmanaged<TimeChangeSource>.fromOpaque(userdata!).takeUnretainedValue().zoneChanged(source.flatMap(sd_event_source_get_event))
            return 0
        }
        var added = sd_event_add_inotify(event, &watch, path, apphost_localtime_watch_mask(), handler, context)
        if added == -ENOENT {
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            added = sd_event_add_inotify(event, &watch, directory.isEmpty ? "/" : directory, apphost_localtime_directory_watch_mask(), handler, context)
        }
        guard added >= 0, let watch else {
            let outcome = zoneWatch == nil ? "time zone changes are not seen" : "the time zone is watched as before"
            logger.warning("\(outcome): cannot watch \(path): \(SystemErrorText.describe(-added))")
            return
        }
        if let zoneWatch { sd_event_source_disable_unref(zoneWatch) }
        zoneWatch = watch
    }

    private func zoneChanged(_ event: OpaquePointer?) {
        if let zonePath, let event { watchZone(zonePath, on: event) }
        let change = detector.zoneRead(clock.reloadZone())
        tell([change] + arm())
    }
}

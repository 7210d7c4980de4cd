import AppHost
import AppHostTestKit
import Foundation
import Logging
import Testing

@testable import AppHostSystemd

/// The source on a real edge loop, with a clock and a timer the test moves and cancels, and
/// a real inotify watch on a zone link of its own.
@Suite(.serialized) struct TimeChangeSourceTests {
    static let day0 = TimeChangeDetectorTests.day0
    static let hour = TimeChangeDetectorTests.hour

    /// A source on a loop of its own, its changes in order; `zonePath` nil: no zone watched.
    final class Running: @unchecked Sendable {
        let loop: EdgeEventLoop
        let source: TimeChangeSource
        let changes = TestLog<TimeChangeDetector.Change>()
        var seen = 0

        init(clock: FakeWallClock, timer: FakeWallClockTimer, zonePath: String?) throws {
            loop = try EdgeEventLoop(name: "test-time")
            source = TimeChangeSource(clock: clock, timer: timer, zonePath: zonePath, logger: Logger(label: "test"))
            try loop.add(source)
        }

        /// The next change, in order (one test task asks).
        func next() async -> TimeChangeDetector.Change? {
            let change = await changes.first(from: seen) { _ in true }
            if change != nil { seen += 1 }
            return change
        }

        func collect() async {
            for await change in source.changes { changes.append(change) }
        }

        func close() {
            loop.close()
            loop.waitUntilEnded()
        }
    }

    /// Runs `body` with a source watching a fake clock at `seconds` and a fake timer, its
    /// changes collected; the source leaves its loop after.
    static func watching(
        at seconds: Int64, zonePath: String? = nil, _ body: (Running, FakeWallClock, FakeWallClockTimer) async throws -> Void
    ) async throws {
        let clock = FakeWallClock(at: seconds)
        let timer = FakeWallClockTimer()
        let running = try Running(clock: clock, timer: timer, zonePath: zonePath)
        defer { running.close() }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await running.collect() }
            defer { running.loop.remove(running.source) }
            try await body(running, clock, timer)
        }
    }

    @Test("a cancelled timer with the clock moved: cause clock; the timer armed again for the moved clock's next midnight")
    func aCancelledTimer() async throws {
        try await Self.watching(at: Self.day0 + 10 * Self.hour) { running, clock, timer in
            #expect(timer.armedAt == [Self.day0 + 24 * Self.hour], "armed for midnight at once, no other timer")
            // A resume: the kernel cancels, the clocks moved together: nothing (the wake-up ends
            // in an arm, and the change that follows is the step's alone).
            clock.pass(Self.hour)
            timer.cancel()
            _ = await timer.arms.first(from: 1) { _ in true }
            clock.step(-(3 * Self.hour + 12 * 60))
            timer.cancel()
            let change = await running.next()
            #expect(change?.causes == .clock && change?.message == "the clock moved 3h 12m back", "\(String(describing: change))")
            #expect(running.changes.all.count == 1, "the resume told nothing: \(running.changes.all)")
            #expect(timer.armedAt.last == Self.day0 + 24 * Self.hour, "07:48 after the step: midnight is still the next boundary")
            // Over midnight: the timer expires there.
            clock.pass(17 * Self.hour)
            timer.expire()
            #expect(await running.next()?.causes == .midnight)
            #expect(timer.armedAt.last == Self.day0 + 48 * Self.hour)
        }
    }

    @Test("the clock set between a wake-up and the arm (ECANCELED from timerfd_settime): looked at again, and armed for the new time")
    func theArmPitfall() async throws {
        try await Self.watching(at: Self.day0 + 10 * Self.hour) { running, clock, timer in
            // The expiry is read and looked at (nothing: it is not midnight); then, before the
            // arm, the clock is set a day on: the failed arm makes the source look again.
            timer.stepBeforeNextArm(clock, by: 24 * Self.hour)
            timer.expire()
            #expect(await running.next()?.causes == [.clock, .midnight])
            #expect(timer.armedAt == [Self.day0 + 24 * Self.hour, Self.day0 + 24 * Self.hour, Self.day0 + 48 * Self.hour], "the failed arm, then the new time's")
        }
    }

    @Test("/etc/localtime replaced (a link renamed over it, as timedated does): cause timezone; again with the same zone: nothing; removed and made again: seen")
    func theZoneLink() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let link = directory.file("localtime")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/usr/share/zoneinfo/Etc/UTC")
        // Made beside, in a directory of their own: a link made in the watched directory would
        // itself be an event there.
        let staging = directory.file("staging")
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        func replace(with zone: String) throws {
            let temporary = staging + "/localtime.new"
            try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: "/usr/share/zoneinfo/" + zone)
            #expect(rename(temporary, link) == 0)
        }
        try await Self.watching(at: Self.day0 + 10 * Self.hour, zonePath: link) { running, clock, _ in
            clock.setZone("Europe/Berlin", offset: Self.hour)
            try? replace(with: "Europe/Berlin")
            let first = await running.next()
            #expect(first?.causes == .timezone && first?.message == "the time zone is now Europe/Berlin", "\(String(describing: first))")
            // The watch follows the new link: the same zone again is nothing, the next is seen.
            try? replace(with: "Europe/Berlin")
            clock.setZone("Asia/Seoul", offset: 9 * Self.hour)
            try? replace(with: "Asia/Seoul")
            #expect(await running.next()?.message == "the time zone is now Asia/Seoul")
            // Gone (the zone falls back to UTC), then back: the directory is watched meanwhile.
            clock.setZone("Etc/UTC", offset: 0)
            try? FileManager.default.removeItem(atPath: link)
            #expect(await running.next()?.message == "the time zone is now Etc/UTC")
            clock.setZone("Europe/Paris", offset: Self.hour)
            try? replace(with: "Europe/Paris")
            #expect(await running.next()?.message == "the time zone is now Europe/Paris")
            // Watching the link again, not the directory.
            clock.setZone("Asia/Tokyo", offset: 9 * Self.hour)
            try? replace(with: "Asia/Tokyo")
            #expect(await running.next()?.message.hasPrefix("the time zone is now Asia/Tokyo") == true)
        }
    }
}

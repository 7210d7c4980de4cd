import AppHost
import Testing

@testable import AppHostSystemd

/// What a wake-up means, with a clock the test moves: a step, a resume, midnight, a change of
/// offset, a new zone.
@Suite struct TimeChangeDetectorTests {
    /// 2026-11-28 00:00:00 UTC.
    static let day0: Int64 = 1_795_824_000
    static let hour: Int64 = 3600

    @Test("a cancelled timer after the clock was set: cause clock, with how far it moved")
    func aStepIsAClockChange() {
        let clock = FakeWallClock(at: Self.day0 + 10 * Self.hour)
        var detector = TimeChangeDetector(clock: clock, zone: "Etc/UTC")
        clock.step(3 * Self.hour + 12 * 60)
        let change = detector.timerWoke()
        #expect(change?.causes == .clock)
        #expect(change?.message == "the clock moved 3h 12m forward")
        #expect(change?.moved == (3 * Self.hour + 12 * 60) * 1_000_000_000)
        #expect(detector.timerWoke() == nil, "the same step seen twice is one change")
        clock.step(-40)
        #expect(detector.timerWoke()?.message == "the clock moved 40s back")
    }

    @Test("a resume alone (both clocks moved by the sleep, the same day) is no change; a step of a second is none either")
    func aResumeIsNoChange() {
        let clock = FakeWallClock(at: Self.day0 + 10 * Self.hour)
        var detector = TimeChangeDetector(clock: clock, zone: "Etc/UTC")
        clock.pass(5 * Self.hour)
        #expect(detector.timerWoke() == nil)
        clock.step(1)
        #expect(detector.timerWoke() == nil)
    }

    @Test("a sleep across midnight: cause midnight only")
    func aSleepAcrossMidnight() {
        let clock = FakeWallClock(at: Self.day0 + 22 * Self.hour)
        var detector = TimeChangeDetector(clock: clock, zone: "Etc/UTC")
        clock.pass(4 * Self.hour)
        #expect(detector.timerWoke()?.causes == .midnight)
    }

    @Test("the boundary is the next local midnight, in the zone; reached, it is cause midnight and the next one follows")
    func midnight() {
        let clock = FakeWallClock(at: Self.day0 + 10 * Self.hour, zone: "Europe/Berlin", offset: Self.hour)
        var detector = TimeChangeDetector(clock: clock, zone: "Europe/Berlin")
        // Local 11:00 (UTC+1): midnight is 23:00 UTC.
        #expect(detector.nextBoundary() == Self.day0 + 23 * Self.hour)
        clock.pass(13 * Self.hour)
        #expect(detector.timerWoke()?.causes == .midnight)
        #expect(detector.nextBoundary() == Self.day0 + 47 * Self.hour)
        // Moved forward over midnight by the clock: both causes.
        clock.step(24 * Self.hour)
        #expect(detector.timerWoke()?.causes == [.clock, .midnight])
    }

    @Test("a change of offset before midnight is the boundary, to the second; reached, it is cause daylight-saving")
    func daylightSaving() {
        // 2027-03-28: Europe/Berlin goes from +1 to +2 at 01:00 UTC.
        let march: Int64 = 1_806_192_000
        let clock = FakeWallClock(at: march - Self.hour, zone: "Europe/Berlin", offset: Self.hour)
        clock.changeOffset(at: march + Self.hour, to: 2 * Self.hour)
        var detector = TimeChangeDetector(clock: clock, zone: "Europe/Berlin")
        // Local 00:00 already passed (it is 00:00 local exactly at march - 1h): the next
        // midnight is far; the offset changes first.
        #expect(detector.nextBoundary() == march + Self.hour)
        clock.pass(2 * Self.hour)
        let change = detector.timerWoke()
        #expect(change?.causes == .daylightSaving)
        #expect(change?.message == "the offset from UTC is now +02:00")
        // The next midnight is in the new offset: 22:00 UTC.
        #expect(detector.nextBoundary() == march + 22 * Self.hour)
    }

    @Test("a new zone just before midnight: cause timezone, and midnight recomputed in it; the same zone again is nothing")
    func aZoneChangeMovesMidnight() {
        let clock = FakeWallClock(at: Self.day0 + 22 * Self.hour + 30 * 60)
        var detector = TimeChangeDetector(clock: clock, zone: "Etc/UTC")
        #expect(detector.nextBoundary() == Self.day0 + 24 * Self.hour)
        // Tokyo (+9): already 07:30 the next day there.
        clock.setZone("Asia/Tokyo", offset: 9 * Self.hour)
        let change = detector.zoneRead("Asia/Tokyo")
        #expect(change?.causes == [.timezone, .midnight])
        #expect(change?.message.hasPrefix("the time zone is now Asia/Tokyo") == true)
        #expect(detector.nextBoundary() == Self.day0 + 24 * Self.hour + 15 * Self.hour)
        #expect(detector.zoneRead("Asia/Tokyo") == nil)
        // Back west, the same local day: timezone alone.
        clock.setZone("Asia/Seoul", offset: 9 * Self.hour)
        #expect(detector.zoneRead("Asia/Seoul")?.causes == .timezone)
    }
}

import AppHostTestKit
import CAppHostShims
import Glibc
import Synchronization

@testable import AppHostSystemd

/// A wall clock the test moves, never the machine's: its zone is a list of offsets from UTC,
/// each from an instant on (the first from always).
final class FakeWallClock: WallClock, Sendable {
    struct State {
        var realtime: Int64
        var boottime: Int64
        var zone: String?
        var offsets: [(from: Int64, offset: Int64)]
    }

    let state: Mutex<State>

    /// At `seconds` since 1970, in a zone `offset` seconds east of UTC.
    init(at seconds: Int64, zone: String? = "Etc/UTC", offset: Int64 = 0) {
        state = Mutex(State(realtime: seconds * 1_000_000_000, boottime: 1_000 * 1_000_000_000, zone: zone, offsets: [(Int64.min, offset)]))
    }

    func now() -> (realtime: Int64, boottime: Int64) {
        state.withLock { ($0.realtime, $0.boottime) }
    }

    func utcOffset(at seconds: Int64) -> Int64 {
        state.withLock { $0.offsets.last { $0.from <= seconds }?.offset ?? 0 }
    }

    func reloadZone() -> String? {
        state.withLock { $0.zone }
    }

    /// Time passes: both clocks move (as across a suspend, too).
    func pass(_ seconds: Int64) {
        state.withLock {
            $0.realtime += seconds * 1_000_000_000
            $0.boottime += seconds * 1_000_000_000
        }
    }

    /// The wall clock is set: it alone moves.
    func step(_ seconds: Int64) {
        state.withLock { $0.realtime += seconds * 1_000_000_000 }
    }

    /// The zone becomes `zone`, `offset` east of UTC from now on for always.
    func setZone(_ zone: String?, offset: Int64) {
        state.withLock {
            $0.zone = zone
            $0.offsets = [(Int64.min, offset)]
        }
    }

    /// From `seconds` on, the zone is `offset` east of UTC (daylight saving time).
    func changeOffset(at seconds: Int64, to offset: Int64) {
        state.withLock { $0.offsets.append((seconds, offset)) }
    }

    var seconds: Int64 { state.withLock { $0.realtime / 1_000_000_000 } }
}

/// A timer the test cancels or lets expire, on an eventfd the edge loop polls: a real timerfd
/// cannot be cancelled without setting the machine's clock.
final class FakeWallClockTimer: WallClockTimer, @unchecked Sendable {
    let fd: Int32
    /// Every time it was armed for, in order, awaitable: each wake-up the source handled ends in
    /// an arm.
    let arms = TestLog<Int64>()
    private let state = Mutex<(pending: WallClockTimerReading, stepOnArm: (clock: FakeWallClock, seconds: Int64)?)>((.nothing, nil))

    init() {
        fd = apphost_open_wake_eventfd()
    }

    /// What it was armed for, in order.
    var armedAt: [Int64] { arms.all }

    func arm(at seconds: Int64) -> Bool {
        arms.append(seconds)
        // The pitfall of timerfd_create(2): the clock set after the read and before the arm
        // fails the arm, which arms all the same and takes the cancellation.
        guard let step = state.withLock({ state in defer { state.stepOnArm = nil }; return state.stepOnArm }) else { return true }
        step.clock.step(step.seconds)
        return false
    }

    func read() -> WallClockTimerReading {
        var value: UInt64 = 0
        _ = Glibc.read(fd, &value, 8)
        return state.withLock { state in
            defer { state.pending = .nothing }
            return state.pending
        }
    }

    func close() {
        Glibc.close(fd)
    }

    /// The kernel cancels it: the clock was set, or the machine resumed.
    func cancel() { wake(.cancelled) }

    /// It reaches the time it was armed for.
    func expire() { wake(.expired) }

    /// The clock is set by `seconds` just before the next arm, which fails with ECANCELED.
    func stepBeforeNextArm(_ clock: FakeWallClock, by seconds: Int64) { state.withLock { $0.stepOnArm = (clock, seconds) } }

    private func wake(_ reading: WallClockTimerReading) {
        state.withLock { $0.pending = reading }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }
}

import AppHost
@testable import AppHostSystemd
import AppHostTestSupport
import CAppHostShims
import Glibc
import Logging
import SystemPackage
import Testing

/// The daemon's one edge thread: the signal reader and the memory-pressure watcher on one
/// `EdgeEventLoop` (sd-event). Signals are sent thread-directed, as in `SignalSourceTests`.
@Suite(.timeLimit(.minutes(1))) struct EdgeEventLoopTests {
    private let quietLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test("signals and memory pressure share one thread, each goes on when the other closes, and close ends both")
    func signalsAndMemoryPressureShareOneThread() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.file("pressure.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)

        let (loop, signals) = try onFreshThread {
            try LifecycleSignalMask.blockInCurrentThread()
            let loop = try EdgeEventLoop(name: "apphost-edge")
            return (loop, try SignalSource(on: loop))
        }
        let pressure = MemoryPressureSource(environment: ["MEMORY_PRESSURE_WATCH": fifo], logger: quietLogger, on: loop)
        #expect(pressure.isWatching)
        #expect(signals.readerThreadID == loop.threadID, "signals are read on the shared thread")

        #expect(apphost_tgkill(getpid(), signals.readerThreadID, SIGUSR1) == 0)
        #expect(await nextValue(signals.signals) == .toggleBackground)
        let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(writer >= 0)
        #expect("pressure\n".withCString { write(writer, $0, 9) } == 9)
        close(writer)
        #expect(await nextValue(pressure.events) == .warning)

        // The signal reader leaves; memory pressure is still heard on the same thread.
        signals.close()
        var ended = signals.signals.makeAsyncIterator()
        #expect(await ended.next() == nil)
        let again = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(again >= 0)
        #expect("pressure\n".withCString { write(again, $0, 9) } == 9)
        close(again)
        #expect(await nextValue(pressure.events) == .warning)

        // Closing the loop finishes what is still on it.
        loop.close()
        var pressureEnded = pressure.events.makeAsyncIterator()
        while await pressureEnded.next() != nil {}
    }
}

extension EdgeEventLoopTests {
    /// Counts its attaches and finishes; refuses to attach when told to.
    final class Probe: EdgeEventClient, @unchecked Sendable {
        let refusal: Int32
        var attached = 0
        var finished = 0
        init(refusal: Int32 = 0) { self.refusal = refusal }
        func attach(to event: OpaquePointer) -> Int32 {
            attached += 1
            return refusal
        }
        func finish() { finished += 1 }
    }

    @Test("add waits for the attach and throws its errno (the client then finished); remove and close finish each client once; a closed loop refuses with EBADF")
    func clientsAttachAndFinishOnce() throws {
        let loop = try onFreshThread {
            try LifecycleSignalMask.blockInCurrentThread()
            return try EdgeEventLoop(name: "apphost-test")
        }
        let kept = Probe()
        try loop.add(kept)
        #expect(kept.attached == 1 && kept.finished == 0)
        let refused = Probe(refusal: EPERM)
        #expect(throws: Errno(rawValue: EPERM)) { try loop.add(refused) }
        #expect(refused.finished == 1)

        let removed = Probe()
        try loop.add(removed)
        loop.remove(removed)
        loop.remove(removed)
        loop.close()
        loop.close()
        // Work queued behind the close is refused; what was on the loop has been finished once.
        let late = Probe()
        #expect(throws: Errno(rawValue: EBADF)) { try loop.add(late) }
        #expect(late.attached == 0 && late.finished == 1)
        loop.waitUntilEnded()
        #expect(removed.finished == 1)
        #expect(kept.finished == 1)
    }
}

import AppHost
@testable import AppHostSystemd
import AppHostTestSupport
import CAppHostShims
import Glibc
import Logging
import Testing

/// The daemon's one edge thread: the signal reader and the memory-pressure watcher on one
/// `PollLoop`. Signals are sent thread-directed, as in `SignalSourceTests`.
@Suite(.timeLimit(.minutes(1))) struct PollLoopTests {
    private let quietLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    @Test("signals and memory pressure share one thread, each goes on when the other closes, and close ends both")
    func signalsAndMemoryPressureShareOneThread() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.file("pressure.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)

        let (loop, signals) = try onFreshThread {
            try LifecycleSignalMask.blockInCurrentThread()
            let loop = try PollLoop(name: "apphost-edge")
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

@testable import AppHostSystemd
import AppHostTestSupport
import CAppHostShims
import Glibc
import Synchronization
import Testing

/// SignalSource in a test process.
///
/// In the daemon every thread blocks the lifecycle signals (C prelude before main), so a
/// process-directed signal stays pending for the process and the signalfd reads it. A test process
/// cannot promise that: Swift Testing's threads leave them unblocked, and a process-directed
/// SIGTERM would kill the runner. So these tests create the source on a fresh thread that blocks
/// the signals (the reader thread inherits the mask) and send every signal thread-directed to the
/// reader thread (tgkill, rt_tgsigqueueinfo): a signalfd reads signals pending for the reading
/// thread as well as for the process, and a thread-directed signal can go nowhere else.
/// The process-directed path is covered by the daemon's integration tests.
@Suite struct SignalSourceTests {
    private func makeSource(
        onDelivery: (@Sendable (SignalDelivery) -> Void)? = nil
    ) throws -> SignalSource {
        try onFreshThread {
            try LifecycleSignalMask.blockInCurrentThread()
            return try SignalSource(onDelivery: onDelivery)
        }
    }

    @Test func refusesWhenTheSignalsAreNotBlocked() throws {
        let failure = try onFreshThread { () -> LifecycleSignalError? in
            _ = apphost_unblock_lifecycle_signals()
            do throws(LifecycleSignalError) {
                _ = try SignalSource()
                return nil
            } catch {
                return error
            }
        }
        #expect(failure == .notBlocked(signals: LifecycleSignal.allSignalNumbers))
        #expect(failure?.description.contains("SIGTERM") == true)
    }

    @Test func everyLifecycleSignalArrives() async throws {
        let source = try makeSource()
        defer { source.close() }
        for number in LifecycleSignal.allSignalNumbers {
            #expect(apphost_tgkill(getpid(), source.readerThreadID, number) == 0)
            let received = await nextValue(source.signals)
            #expect(received == LifecycleSignal(signalNumber: number))
        }
    }

    @Test func aThousandQueuedRealTimeSignalsArriveInOrder() async throws {
        let values = Mutex<[Int32]>([])
        let source = try makeSource { delivery in
            values.withLock { $0.append(delivery.value) }
        }
        defer { source.close() }
        let background = LifecycleSignal.sigrtmin + 1
        var sendFailures = 0
        for value in Int32(0)..<1000 {
            if apphost_thread_sigqueue(getpid(), source.readerThreadID, background, value) != 0 {
                sendFailures += 1
            }
        }
        #expect(sendFailures == 0)
        var received = 0
        var wrong = 0
        while received < 1000, let signal = await nextValue(source.signals) {
            received += 1
            if signal != .enterBackground { wrong += 1 }
        }
        #expect(received == 1000)
        #expect(wrong == 0)
        #expect(values.withLock { $0 } == Array(0..<1000))
    }

    @Test func deliveryCarriesTheSender() async throws {
        let deliveries = Mutex<[SignalDelivery]>([])
        let source = try makeSource { delivery in deliveries.withLock { $0.append(delivery) } }
        defer { source.close() }
        #expect(apphost_thread_sigqueue(getpid(), source.readerThreadID, LifecycleSignal.sigrtmin + 18, 42) == 0)
        #expect(await nextValue(source.signals) == .trimMemory)
        let delivery = deliveries.withLock { $0.first }
        #expect(delivery?.senderPID == UInt32(getpid()))
        #expect(delivery?.value == 42)
        #expect(delivery?.code == -1)  // SI_QUEUE
    }

    @Test func closeFinishesTheStream() async throws {
        let source = try makeSource()
        source.close()
        var count = 0
        for await _ in source.signals { count += 1 }
        #expect(count == 0)
    }
}

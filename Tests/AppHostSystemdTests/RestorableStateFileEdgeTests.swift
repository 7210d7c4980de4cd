import AppHost
import AppHostSupport
import AppHostTestKit
import Glibc
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

@testable import AppHostSystemd

@Suite struct RestorableStateFileEdgeTests {
    private func files(in directory: TemporaryDirectory, logs: CapturedLogs = CapturedLogs(), coalescing: Duration = .zero) -> RestorableStateFiles {
        RestorableStateFiles(directory: directory.path, fileDescriptorStore: FileDescriptorStore(environment: [:]), coalescing: coalescing, logger: logs.logger())
    }

    @Test("a burst within the coalescing window is one write, of the newest state")
    func aBurstIsOneWrite() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let files = files(in: directory, logs: logs, coalescing: .milliseconds(200))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await files.writer.run() }
            for generation in 1...50 { files.persist(.sample(generation: UInt64(generation))) }
            let written = await logs.first { $0.message == "restorable state written" }
            #expect(written?.metadata["generation"] == "50")
            #expect(logs.all.filter { $0.message == "restorable state written" }.count == 1)
            group.cancelAll()
        }
    }

    @Test("a shutdown during the coalescing window writes at once, without waiting it out")
    func aShutdownCutsTheWindowShort() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory, coalescing: .seconds(3600))
        await testGracefulShutdown { trigger in
            await withDiscardingTaskGroup { group in
                group.addTask { await files.writer.run() }
                files.persist(.sample(generation: 3))
                trigger.triggerGracefulShutdown()
            }
        }
        #expect(generationOnDisk(files) == 3)
    }

    // Fails without the durable persist cutting the window short: the writer would wait out its
    // hour-long window, and the call with it.
    @Test("persistDurably returns once the state is on disk, written by the writer inside its coalescing window (logind's sleep waits for it)")
    func aDurablePersistIsOnDiskWhenItReturns() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let files = files(in: directory, logs: logs, coalescing: .seconds(3600))
        await withDiscardingTaskGroup { group in
            group.addTask { await files.writer.run() }
            files.persist(.sample(generation: 6))
            await files.persistDurably(.sample(generation: 7))
            #expect(generationOnDisk(files) == 7)
            // As new or older than the file: answered at once, and the file stays.
            await files.persistDurably(.sample(generation: 7))
            await files.persistDurably(.sample(generation: 2))
            #expect(generationOnDisk(files) == 7)
            #expect(logs.all.filter { $0.message == "restorable state written" }.count == 1, "one write, of the newest")
            group.cancelAll()
        }
    }

    @Test("persistDurably while the writer waits out a window for an earlier state, and after the writer ended")
    func aDurablePersistBesideTheWindowAndAfterTheEnd() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory, coalescing: .milliseconds(50))
        await testGracefulShutdown { trigger in
            await withDiscardingTaskGroup { group in
                group.addTask { await files.writer.run() }
                for generation in 1...20 {
                    files.persist(.sample(generation: UInt64(generation * 2)))
                    await files.persistDurably(.sample(generation: UInt64(generation * 2 + 1)))
                    #expect(generationOnDisk(files) ?? 0 >= UInt64(generation * 2 + 1))
                }
                trigger.triggerGracefulShutdown()
            }
        }
        await files.persistDurably(.sample(generation: 100))
        #expect(generationOnDisk(files) == 100)
    }

    // Fails where a durable persist waits for a writer that never runs: it would never return.
    @Test("persistDurably without a running writer writes on the caller's path and returns")
    func aDurablePersistWithoutTheWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory, coalescing: .seconds(3600))
        files.persist(.sample(generation: 3))
        await files.persistDurably(.sample(generation: 4))
        #expect(generationOnDisk(files) == 4)
    }

    // Fails without the write token: concurrent writers share the temporary file and their
    // renames land out of order (the file goes back, or a rename fails).
    @Test("states handed over at once from many tasks after the writer ended: one write at a time, the newest last, none failed")
    func concurrentStatesAfterTheEndAreWrittenOneAtATime() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let files = files(in: directory, logs: logs)
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            await files.writer.run()
        }
        await withDiscardingTaskGroup { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<25 {
                        let generation = UInt64(round * 8 + task + 1)
                        if round % 5 == 0 { await files.persistDurably(.sample(generation: generation)) } else { files.persist(.sample(generation: generation)) }
                    }
                }
            }
        }
        #expect(generationOnDisk(files) == 200)
        #expect(!logs.all.contains { $0.level >= .error }, "\(logs.all.filter { $0.level >= .error }.map(\.message))")
    }

    @Test("writePending writes what persist handed over, for a program that does not run the writer")
    func writePendingWritesNow() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory, coalescing: .seconds(3600))
        files.persist(.sample(generation: 7))
        #expect(generationOnDisk(files) == nil)
        files.writePending()
        #expect(generationOnDisk(files) == 7)
        files.writePending()
        #expect(generationOnDisk(files) == 7)
    }

    /// The generation in the file now, nil when there is no usable file.
    private func generationOnDisk(_ files: RestorableStateFiles) -> UInt64? {
        files.restore { _ in }?.generation
    }

    @Test func persistWaitsForTheWriterWhichWritesTheNewestBeforeItsGracefulShutdownEnds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory)
        for generation in 1...50 { files.persist(.sample(generation: UInt64(generation))) }
        #expect(generationOnDisk(files) == nil)

        await testGracefulShutdown { trigger in
            await withDiscardingTaskGroup { group in
                group.addTask { await files.writer.run() }
                for generation in 51...100 { files.persist(.sample(generation: UInt64(generation))) }
                trigger.triggerGracefulShutdown()
            }
        }
        #expect(generationOnDisk(files) == 100)
    }

    @Test func aStatePersistedWhileTheWriterRunsIsWrittenWithoutWaitingForShutdown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logs = CapturedLogs()
        let files = files(in: directory, logs: logs)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await files.writer.run() }
            files.persist(.sample(generation: 5))
            let written = await logs.first { $0.message == "restorable state written" && $0.metadata["generation"] == "5" }
            #expect(written != nil)
            #expect(generationOnDisk(files) == 5)
            group.cancelAll()
        }
    }

    @Test func cancellationAlsoWritesWhatIsPending() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory)
        await withDiscardingTaskGroup { group in
            files.persist(.sample(generation: 7))
            group.addTask { await files.writer.run() }
            group.cancelAll()
        }
        #expect(generationOnDisk(files) == 7)
    }

    @Test func afterTheWriterEndedPersistWritesAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory)
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            await files.writer.run()
        }
        files.persist(.sample(generation: 12))
        #expect(generationOnDisk(files) == 12)
    }

    @Test func theHostsLastStateLandsWhenTheWriterIsListedBeforeIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory)
        let host = PersistsAtShutdown(storage: files, last: .sample(generation: 99))
        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: files.writer),
                .init(service: host, successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            logger: Logger(label: "test")
        ))
        try await withThrowingDiscardingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            await host.running.first { _ in true }
            await group.triggerGracefulShutdown()
        }
        #expect(generationOnDisk(files) == 99)
    }

    @Test func aStateNoNewerThanTheFileIsNotWritten() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let files = files(in: directory)
        try files.persistNow(.sample(generation: 5))
        var same = RestorableState.sample(generation: 5)
        same.services = [:]
        try files.persistNow(same)
        try files.persistNow(.sample(generation: 3))
        #expect(files.restore { _ in } == .sample(generation: 5))
    }

    @Test func aFailedWriteIsLoggedNotThrown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try AtomicFile.write([], to: directory.file("in-the-way"))
        let logs = CapturedLogs()
        let files = RestorableStateFiles(directory: directory.file("in-the-way"), fileDescriptorStore: FileDescriptorStore(environment: [:]), coalescing: .zero, logger: logs.logger())
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            await files.writer.run()
        }
        files.persist(.sample(generation: 1))
        let record = try #require(logs.all.first { $0.level > .debug })
        #expect(record.level == .error)
        #expect(record.message.hasPrefix("restorable state not written: mkdir \(directory.file("in-the-way")): Not a directory"))
        #expect(record.metadata["generation"] == "1")
    }
}

/// Stands in for the host: persists its last state when told to shut down, then ends.
private struct PersistsAtShutdown: Service {
    let storage: RestorableStateFiles
    let last: RestorableState
    let running: AsyncStream<Void>
    private let isRunning: AsyncStream<Void>.Continuation

    init(storage: RestorableStateFiles, last: RestorableState) {
        self.storage = storage
        self.last = last
        (running, isRunning) = AsyncStream.makeStream()
    }

    func run() async throws {
        isRunning.yield()
        try? await gracefulShutdown()
        storage.persist(last)
    }
}

import AppHost
@testable import AppHostSystemd
import Foundation
import AppHostTestSupport
import Glibc
import Logging
import AppHostTestKit
import Testing

@Suite struct MemoryPressureSourceTests {
    private let quietLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    private func base64(_ text: String, nul: Bool = false) -> String {
        var bytes = Array(text.utf8)
        if nul { bytes.append(0) }
        return Data(bytes).base64EncodedString()
    }

    private func writeAll(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    @Test func fifoWritesProduceWarnings() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.file("pressure.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let source = MemoryPressureSource(environment: ["MEMORY_PRESSURE_WATCH": fifo], logger: quietLogger)
        defer { source.close() }
        #expect(source.isWatching)
        #expect(source.sourceDescription == "MEMORY_PRESSURE_WATCH=\(fifo) (fifo)")

        // Two writers in turn: the second must still be heard after the first hung up.
        for round in 0..<2 {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            #expect(writer >= 0)
            #expect(writeAll(writer, "pressure \(round)\n"))
            close(writer)
            #expect(await nextValue(source.events) == .warning)
        }
    }

    @Test func socketWritesProduceWarningsAndGetTheWriteBuffer() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("pressure.sock")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(listener) }
        let bound = withUnixAddress(pathBytes: Array(path.utf8)) { bind(listener, $0, $1) }
        #expect(bound == 0)
        #expect(listen(listener, 4) == 0)

        let source = MemoryPressureSource(
            environment: ["MEMORY_PRESSURE_WATCH": path, "MEMORY_PRESSURE_WRITE": base64("hello")],
            logger: quietLogger)
        defer { source.close() }
        #expect(source.sourceDescription == "MEMORY_PRESSURE_WATCH=\(path) (socket)")
        // The source connected in init, so the connection is already queued.
        let connection = accept(listener, nil, nil)
        #expect(connection >= 0)
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
        #expect(count == 5)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "hello")

        #expect(writeAll(connection, "x"))
        #expect(await nextValue(source.events) == .warning)
        #expect(writeAll(connection, "y"))
        #expect(await nextValue(source.events) == .warning)
    }

    @Test(arguments: ["/dev/null", ""])
    func devNullOrEmptyTurnsItOff(watch: String) async {
        let logs = CapturedLogs()
        let logger = logs.logger()
        let source = MemoryPressureSource(environment: ["MEMORY_PRESSURE_WATCH": watch], logger: logger)
        #expect(!source.isWatching)
        #expect(source.sourceDescription.hasPrefix("off: MEMORY_PRESSURE_WATCH=\(watch)"))
        #expect(logs.all.count == 1)
        #expect(logs.all.first?.level == .info)
        source.close()
        var count = 0
        for await _ in source.events { count += 1 }
        #expect(count == 0)
    }

    @Test func unusableSourcesAreLoggedOnceAsWarnings() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let plain = directory.file("plain")
        #expect(FileManager.default.createFile(atPath: plain, contents: Data()))
        for (environment, reason) in [
            (["MEMORY_PRESSURE_WATCH": plain], "not a PSI file"),
            (["MEMORY_PRESSURE_WATCH": directory.file("missing")], "No such file"),
            (["MEMORY_PRESSURE_WATCH": plain, "MEMORY_PRESSURE_WRITE": "%%%"], "not valid base64"),
        ] {
            let logs = CapturedLogs()
        let logger = logs.logger()
            let source = MemoryPressureSource(environment: environment, logger: logger)
            defer { source.close() }
            #expect(!source.isWatching)
            #expect(source.sourceDescription.contains(reason), "\(source.sourceDescription)")
            #expect(logs.all.count == 1)
            #expect(logs.all.first?.level == .warning)
            #expect(logs.all.first?.message.contains(reason) == true)
        }
    }

    @Test func decodesTheWriteBuffer() {
        #expect(MemoryPressureSource.decodeWrite(base64("some 200000 2000000", nul: true))
                == Array("some 200000 2000000".utf8) + [0])
        #expect(MemoryPressureSource.decodeWrite("aGVsbG8") == Array("hello".utf8))  // unpadded
        #expect(MemoryPressureSource.decodeWrite("aGVsbG8=\n") == Array("hello".utf8))
        #expect(MemoryPressureSource.decodeWrite("not base64!") == nil)
    }

    @Test func thresholdsBecomeTriggers() {
        #expect(MemoryPressureSource.Thresholds.default.warningTrigger == "some 200000 2000000")
        #expect(MemoryPressureSource.Thresholds.default.criticalTrigger == "full 800000 2000000")
        let custom = MemoryPressureSource.Thresholds(
            warningStall: .milliseconds(100), criticalStall: .seconds(1), window: .seconds(4))
        #expect(custom.warningTrigger == "some 100000 4000000")
        #expect(custom.criticalTrigger == "full 1000000 4000000")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/pressure/memory"), "the kernel has no PSI (/proc/pressure/memory)"))
    func fallsBackToPSIWithBothTriggers() {
        let logs = CapturedLogs()
        let logger = logs.logger()
        let source = MemoryPressureSource(environment: [:], logger: logger)
        defer { source.close() }
        #expect(source.isWatching)
        #expect(source.sourceDescription.hasSuffix("memory.pressure (PSI: some 200000 2000000, full 800000 2000000)")
                || source.sourceDescription == "/proc/pressure/memory (PSI: some 200000 2000000, full 800000 2000000)",
                "\(source.sourceDescription)")
        #expect(!logs.all.contains { $0.level >= .warning })
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/pressure/memory"), "the kernel has no PSI (/proc/pressure/memory)"))
    func psiWatchGetsTheDecodedTrigger() {
        // systemd encodes the trigger with its NUL; without one the source adds it (the kernel
        // overwrites the last byte written with NUL, so a bare trigger would lose a digit).
        for encoded in [base64("some 200000 2000000", nul: true), base64("some 200000 2000000")] {
            let source = MemoryPressureSource(
                environment: ["MEMORY_PRESSURE_WATCH": "/proc/pressure/memory", "MEMORY_PRESSURE_WRITE": encoded],
                logger: quietLogger)
            defer { source.close() }
            #expect(source.sourceDescription == "MEMORY_PRESSURE_WATCH=/proc/pressure/memory (PSI: some 200000 2000000)")
        }
    }

    @Test func findsTheCgroupV2PressureFileOnlyWhenItExists() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cgroupFile = directory.file("cgroup")
        try "4:memory:/x\n0::/apphost-test-does-not-exist.scope\n".write(toFile: cgroupFile, atomically: true, encoding: .utf8)
        #expect(MemoryPressureSource.ownCgroupPressureFile(cgroupFile: cgroupFile) == nil)
        try "4:memory:/x\n".write(toFile: cgroupFile, atomically: true, encoding: .utf8)
        #expect(MemoryPressureSource.ownCgroupPressureFile(cgroupFile: cgroupFile) == nil)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory.pressure"), "no cgroup v2 memory.pressure at the root (a cgroup v1 or hybrid machine)"))
    func findsTheCgroupV2PressureFileOfTheRoot() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cgroupFile = directory.file("cgroup")
        try "0::/\n".write(toFile: cgroupFile, atomically: true, encoding: .utf8)
        #expect(MemoryPressureSource.ownCgroupPressureFile(cgroupFile: cgroupFile) == "/sys/fs/cgroup/memory.pressure")
    }
}

/// A device that cannot be waited on is refused at start with the reason, instead of spinning a
/// core: epoll (sd-event's) refuses what has no poll of its own.
@Suite struct MemoryPressureFloodTests {
    @Test("MEMORY_PRESSURE_WATCH=/dev/zero: refused at start, saying it cannot be waited on; no warning is ever delivered", arguments: ["/dev/zero", "/dev/urandom"])
    func deviceThatCannotBeWaitedOnIsRefused(path: String) async throws {
        let logs = CapturedLogs()
        let source = MemoryPressureSource(environment: ["MEMORY_PRESSURE_WATCH": path], logger: logs.logger())
        defer { source.close() }
        #expect(!source.isWatching)
        #expect(source.sourceDescription == "off: \(path) cannot be waited on (epoll refuses it: not a FIFO, socket, PSI file or pollable device)")
        var events = source.events.makeAsyncIterator()
        #expect(await events.next() == nil, "a source that is off delivers nothing and ends")
    }
}

/// A FIFO the daemon may only read (no write permission: systemd's own FIFO of another user)
/// reports a hang-up when its writer leaves; the watcher opens it again and hears the next one.
@Suite struct MemoryPressureReadOnlyFIFOTests {
    @Test("a read-only FIFO is watched again after each writer leaves: the second writer's pressure arrives too")
    func readOnlyFIFOIsReopened() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.file("pressure.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
        let fd = open(fifo, flags)
        try #require(fd >= 0)
        let endpoint = MemoryPressureEndpoint(fd: fd, kind: .fifo, path: fifo, level: .warning, trigger: "", openFlags: flags)
        let source = MemoryPressureSource(resolution: .watching([endpoint], description: "a read-only FIFO"), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, on: nil)
        defer { source.close() }
        for round in 1...2 {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            try #require(writer >= 0, "round \(round): no reader on the FIFO")
            #expect("pressure\n".withCString { write(writer, $0, 9) } == 9)
            close(writer)
            #expect(await nextValue(source.events) == .warning, "round \(round)")
        }
    }
}

import AppHost
@testable import AppHostSystemd
import AppHostTestSupport
import Foundation
import Synchronization
import Testing

/// The health problem kept in the running marker, for the launch after a watchdog kill.
@Suite struct LaunchStateHealthTests {
    @Test("an unclean exit while unhealthy: the next launch gets the problem; healthy again or a clean exit: none")
    func theNextLaunchGetsTheProblem() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = LaunchStateFiles(directory: directory)
        _ = try files.beginLaunch()
        try files.recordHealthProblem("outbox failed 6 times in 60s")
        try files.recordExit(.watchdog)
        let after = try files.beginLaunch()
        #expect(after.previousExitCause == .watchdog)
        #expect(after.previousHealthProblem == "outbox failed 6 times in 60s")

        try files.recordHealthProblem("db reports: no connection\nsecond line")
        try files.recordHealthProblem(nil)
        #expect(try files.beginLaunch().previousHealthProblem == nil, "healthy again before the end")

        let options = try files.beginLaunch()
        try files.recordHealthProblem("db reports: no connection\nsecond line")
        #expect(try files.beginLaunch().previousHealthProblem == "db reports: no connection\nsecond line", "every line of it")
        try files.recordHealthProblem("stuck")
        _ = try files.markCleanExit(of: options)
        #expect(try files.beginLaunch().previousHealthProblem == nil, "a clean exit leaves no marker")
    }

    @Test("a long problem is cut to 1 KiB")
    func aLongProblemIsCut() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = LaunchStateFiles(directory: directory)
        _ = try files.beginLaunch()
        try files.recordHealthProblem(String(repeating: "x", count: 5000))
        #expect(try files.beginLaunch().previousHealthProblem?.utf8.count == 1024)
    }

    @Test("the marker's bytes", arguments: [
        ("123\n", nil),
        ("123", nil),
        ("123\nstuck\n", "stuck"),
        ("123\nstuck", "stuck"),
        ("\n\n", nil),
        ("123\n\u{FF}\n", "\u{FFFD}"),
    ] as [(String, String?)])
    func markerBytes(text: String, problem: String?) {
        var bytes = Array(text.utf8)
        if text.contains("\u{FF}") { bytes = [0x31, 0x0A, 0xFF, 0x0A] }
        #expect(LaunchStateFiles.healthProblem(inMarker: bytes) == problem)
    }

    @Test("a FIFO, a symbolic link or a directory where the marker belongs: the launch neither hangs nor reads it, and counts it as an unclean exit", arguments: ["fifo", "symlink", "directory"])
    func aBadMarker(kind: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = LaunchStateFiles(directory: directory)
        _ = try files.beginLaunch()
        let path = directory + "/running"
        try FileManager.default.removeItem(atPath: path)
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "symlink":
            try "1\nfrom elsewhere\n".write(toFile: directory + "/elsewhere", atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory + "/elsewhere")
        default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let result = Mutex<LaunchOptions?>(nil)
        let finished = await completes(within: .seconds(10)) { result.withLock { $0 = try? files.beginLaunch() } }
        #expect(finished, "the launch hung on a \(kind)")
        let options = try #require(result.withLock { $0 }, "the launch failed on a \(kind)")
        #expect(options.previousExit == .unclean)
        #expect(options.previousHealthProblem == nil)
        try files.recordHealthProblem("stuck")
        #expect(try files.beginLaunch().previousHealthProblem == "stuck", "the marker is a file again")
    }
}

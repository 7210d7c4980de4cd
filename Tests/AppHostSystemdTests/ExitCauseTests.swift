import AppHost
@testable import AppHostSystemd
import AppHostTestSupport
import Foundation
import Testing

/// What `apphostd record-exit` makes of systemd's variables, and how the next launch reads it.
@Suite struct ExitCauseTests {
    @Test("each service result systemd writes for ExecStopPost= becomes its cause", arguments: [
        ("success", "exited", "0", ExitCause.clean),
        ("success", nil, nil, .clean),
        ("exit-code", "exited", "3", .exitCode(3)),
        ("signal", "killed", "KILL", .signal("KILL")),
        ("core-dump", "dumped", "SEGV", .coreDump("SEGV")),
        // A watchdog kill is SIGABRT with a core: the result says why.
        ("watchdog", "dumped", "ABRT", .watchdog),
        ("timeout", "killed", "TERM", .timeout),
        ("oom-kill", "killed", "KILL", .oomKill),
        // Results without a cause of their own are told by how the process ended.
        ("protocol", "exited", "1", .exitCode(1)),
        ("resources", nil, nil, .unknown),
        ("start-limit-hit", nil, nil, .unknown),
        ("some-future-result", "killed", "RTMIN+3", .signal("RTMIN+3")),
    ] as [(String, String?, String?, ExitCause)])
    func serviceResults(result: String, code: String?, status: String?, cause: ExitCause) throws {
        #expect(try ExitCause(serviceResult: result, exitCode: code, exitStatus: status) == cause)
    }

    @Test func withoutSystemdItSaysWhereToRunIt() {
        #expect(throws: ExitRecordError.missing(variable: "SERVICE_RESULT")) {
            try ExitCause(serviceResult: nil, exitCode: nil, exitStatus: nil)
        }
        #expect("\(ExitRecordError.missing(variable: "SERVICE_RESULT"))".contains("ExecStopPost="))
    }

    @Test("values systemd never writes are refused, each naming its variable", arguments: [
        ("success\nEVIL=1", "exited", "0", "SERVICE_RESULT"),
        ("Success", "exited", "0", "SERVICE_RESULT"),
        ("signal", "killed", "9", "EXIT_STATUS"),
        ("exit-code", "exited", "KILL", "EXIT_STATUS"),
        ("exit-code", "exited", "256", "EXIT_STATUS"),
        ("exit-code", "exited", "-1", "EXIT_STATUS"),
        ("signal", "shot", "KILL", "EXIT_CODE"),
        ("signal", "killed", "SIGKILL\n", "EXIT_STATUS"),
        ("exit-code", nil, nil, "EXIT_CODE"),
        ("signal", "killed", nil, "EXIT_STATUS"),
    ] as [(String, String?, String?, String)])
    func garbage(result: String, code: String?, status: String?, variable: String) {
        do {
            let cause = try ExitCause(serviceResult: result, exitCode: code, exitStatus: status)
            Issue.record("took \(cause)")
        } catch {
            #expect("\(error)".hasPrefix("$\(variable) is"), "\(error)")
            #expect(!"\(error)".contains("\n"), "\(error)")
        }
    }

    @Test func aMegabyteOfGarbageIsQuotedInOneShortLine() {
        let huge = String(repeating: "A", count: 1 << 20)
        do {
            _ = try ExitCause(serviceResult: "signal", exitCode: "killed", exitStatus: huge)
            Issue.record("took a megabyte as a signal name")
        } catch {
            let text = "\(error)"
            #expect(text.count < 200, "\(text.count) characters")
            #expect(text.contains("(1048576 bytes)"), "\(text)")
        }
    }

    @Test("the record reads back as the cause it was made from", arguments: [
        ExitCause.clean, .exitCode(1), .exitCode(255), .signal("KILL"), .signal("RTMIN+1"), .coreDump("SEGV"),
        .watchdog, .timeout, .oomKill, .unknown,
    ])
    func recordRoundTrip(cause: ExitCause) {
        #expect(ExitCause(recordText: cause.recordText + "\n") == cause)
    }

    @Test func aDamagedRecordIsNoRecord() {
        for text in ["", "signal", "signal kill", "exit-code 0", "exit-code 1000", "clean extra", "watchdog\nwatchdog\n", "\u{0}"] {
            #expect(ExitCause(recordText: text) == nil, "\(text.debugDescription)")
        }
    }

    // MARK: The next launch

    @Test func theNextLaunchTakesTheRecordOnce() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = LaunchStateFiles(directory: directory)
        #expect(try files.beginLaunch().previousExitCause == nil, "a first launch has no previous run")
        try files.recordExit(.signal("KILL"))
        let killed = try files.beginLaunch()
        #expect(killed.previousExitCause == .signal("KILL"))
        #expect(killed.previousExit == .unclean)
        #expect(!FileManager.default.fileExists(atPath: directory + "/last-exit"), "the record was not taken")
        // This run ends without a record (a power loss): the marker alone says unknown.
        #expect(try files.beginLaunch().previousExitCause == .unknown)
        _ = try files.markCleanExit(of: killed)
        #expect(try files.beginLaunch().previousExitCause == .clean, "no record, no marker: outside systemd, clean")
    }

    @Test func aRecordWinsOverTheMarker() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = LaunchStateFiles(directory: directory)
        let options = try files.beginLaunch()
        _ = try files.markCleanExit(of: options)
        // A clean terminate, then an exit status systemd saw: the record says what happened.
        try files.recordExit(.exitCode(78))
        #expect(try files.beginLaunch().previousExitCause == .exitCode(78))
    }

    @Test("a FIFO, a symbolic link or garbage where the record belongs: no record, no hang, and it is gone", arguments: ["fifo", "symlink", "garbage", "huge"])
    func aBadRecordIsNoRecord(kind: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = LaunchStateFiles(directory: directory)
        _ = try files.beginLaunch()
        let path = directory + "/last-exit"
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "symlink":
            try "signal KILL\n".write(toFile: directory + "/elsewhere", atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory + "/elsewhere")
        case "garbage": try "signal kill -9\n".write(toFile: path, atomically: true, encoding: .utf8)
        default: try String(repeating: "signal KILL\n", count: 1000).write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(try files.beginLaunch().previousExitCause == .unknown, "the marker of the launch before counts, nothing else")
        #expect((try? FileManager.default.attributesOfItem(atPath: path)) == nil, "\(kind) left in place")
    }
}

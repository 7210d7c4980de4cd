import AppHost
import AppHostSystemd
import AppHostTestSupport
import Foundation
import Testing

@testable import AppHostDaemon

/// `apphostd record-exit`, as the unit's `ExecStopPost=` runs it.
@Suite struct RecordExitCommandTests {
    @Test func itParsesAsASubcommandOfItsOwn() throws {
        #expect(try Invocation.parse(["record-exit"]) == .recordExit(config: nil, stateDirectory: nil))
        #expect(try Invocation.parse(["record-exit", "--config", "/etc/a.yaml", "--state-directory=/s"]) == .recordExit(config: "/etc/a.yaml", stateDirectory: "/s"))
        #expect(Invocation.help(for: nil, identity: .apphostd).contains("record-exit"))
    }

    func run(_ environment: [String: String], in directory: String) -> AppHostDaemon.ExitStatus {
        RecordExitCommand(config: nil, stateDirectory: directory, environment: environment).run()
    }

    func recorded(in directory: String) -> String? {
        try? String(contentsOfFile: directory + "/last-exit", encoding: .utf8)
    }

    @Test func aKillIsRecordedForTheNextLaunch() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let status = run(["SERVICE_RESULT": "signal", "EXIT_CODE": "killed", "EXIT_STATUS": "KILL"], in: directory)
        #expect(status == .clean)
        #expect(recorded(in: directory) == "signal KILL\n")
        #expect(try LaunchStateFiles(directory: directory).beginLaunch().previousExitCause == .signal("KILL"))
    }

    @Test("after a kill, the metrics textfile the config names says notRunning: a dead daemon never looks alive")
    func theMetricsTextfileSaysNotRunning() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let textfile = directory + "/kiosk.prom"
        try """
            # TYPE apphost_state gauge
            apphost_state{daemon="kiosk",state="active"} 1.0
            apphost_state{daemon="kiosk",state="notRunning"} 0.0
            # TYPE apphost_launches_total counter
            apphost_launches_total{daemon="kiosk"} 3

            """.write(toFile: textfile, atomically: true, encoding: .utf8)
        try "host:\n  state-directory: \(directory)/state\n  metrics:\n    textfile: \(textfile)\nservices:\n  - logger\n"
            .write(toFile: directory + "/c.yaml", atomically: true, encoding: .utf8)
        let status = RecordExitCommand(config: directory + "/c.yaml", stateDirectory: nil, environment: ["SERVICE_RESULT": "signal", "EXIT_CODE": "killed", "EXIT_STATUS": "KILL"]).run()
        #expect(status == .clean)
        let text = try String(contentsOfFile: textfile, encoding: .utf8)
        #expect(text.contains(#"apphost_state{daemon="kiosk",state="active"} 0"#))
        #expect(text.contains(#"apphost_state{daemon="kiosk",state="notRunning"} 1"#))
        #expect(text.contains(#"apphost_launches_total{daemon="kiosk"} 3"#))
        var info = stat()
        #expect(stat(textfile, &info) == 0 && info.st_mode & 0o777 == 0o644, "node_exporter must still read it")
    }

    @Test("a FIFO where the metrics textfile belongs: record-exit records the cause, leaves the FIFO alone and never waits on it")
    func aFIFOTextfileNeverHoldsUpTheStop() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(mkfifo(directory + "/kiosk.prom", 0o644) == 0)
        try "host:\n  state-directory: \(directory)/state\n  metrics:\n    textfile: \(directory)/kiosk.prom\nservices:\n  - logger\n"
            .write(toFile: directory + "/c.yaml", atomically: true, encoding: .utf8)
        let status = RecordExitCommand(config: directory + "/c.yaml", stateDirectory: nil, environment: ["SERVICE_RESULT": "signal", "EXIT_CODE": "killed", "EXIT_STATUS": "KILL"]).run()
        #expect(status == .clean)
        #expect(recorded(in: directory + "/state") == "signal KILL\n")
        var info = stat()
        #expect(stat(directory + "/kiosk.prom", &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }

    @Test func runByHandItSaysWhereItBelongsAndRecordsNothing() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(run([:], in: directory) == .usage)
        #expect(recorded(in: directory) == nil)
    }

    @Test("hostile values exit 65 and record nothing", arguments: [
        ["SERVICE_RESULT": "signal\nSTATUS=pwned", "EXIT_CODE": "killed", "EXIT_STATUS": "KILL"],
        ["SERVICE_RESULT": "exit-code", "EXIT_CODE": "exited", "EXIT_STATUS": String(repeating: "9", count: 1 << 20)],
        ["SERVICE_RESULT": "signal", "EXIT_CODE": "killed", "EXIT_STATUS": "../../etc/passwd"],
        ["SERVICE_RESULT": "exit-code"],
    ])
    func hostileValues(environment: [String: String]) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(run(environment, in: directory) == .badInput)
        #expect(recorded(in: directory) == nil)
    }

    @Test func aBrokenConfigFallsBackToSystemdsStateDirectory() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/broken.yaml"
        try "host:\n  bogus-key: 1\nservices: []\n".write(toFile: config, atomically: true, encoding: .utf8)
        let state = directory + "/state"
        let environment = ["SERVICE_RESULT": "exit-code", "EXIT_CODE": "exited", "EXIT_STATUS": "78", "STATE_DIRECTORY": state]
        #expect(RecordExitCommand(config: config, stateDirectory: nil, environment: environment).run() == .clean)
        #expect(recorded(in: state) == "exit-code 78\n")
        var without = environment
        without["STATE_DIRECTORY"] = nil
        #expect(RecordExitCommand(config: config, stateDirectory: nil, environment: without).run() == .badConfiguration)
    }

    @Test func anUnwritableStateDirectoryExits73() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A file where the directory should be.
        let file = directory + "/not-a-directory"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(run(["SERVICE_RESULT": "success"], in: file) == .cannotWrite)
    }
}

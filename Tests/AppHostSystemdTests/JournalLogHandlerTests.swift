@testable import AppHostSystemd
import Foundation
import Glibc
import Logging
import Testing

@Suite struct JournalLogHandlerTests {
    /// A pipe standing in for stderr.
    final class Pipe {
        let readEnd: Int32
        let writeEnd: Int32
        init() {
            var fds: [Int32] = [0, 0]
            _ = Glibc.pipe(&fds)
            readEnd = fds[0]
            writeEnd = fds[1]
        }
        /// Everything written so far (the handler's write has returned, so it is in the pipe).
        func drain() -> String {
            var buffer = [UInt8](repeating: 0, count: 65536)
            _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
        }
        deinit {
            close(readEnd)
            close(writeEnd)
        }
    }

    private func logger(
        to pipe: Pipe, environment: [String: String] = [:], control: LogLevelControl = LogLevelControl(level: .trace)
    ) -> Logger {
        Logger(label: "test.journal") { label in
            JournalLogHandler(label: label, identifier: "apphostd", environment: environment,
                              outputFD: pipe.writeEnd, levelControl: control, metadataProvider: nil)
        }
    }

    @Test func plainLinesCarryThePriorityAndMetadata() {
        let pipe = Pipe()
        var log = logger(to: pipe)
        log[metadataKey: "service"] = "analytics"
        log.info("launched", metadata: ["event": "didFinishLaunching", "duration": "12 ms"])
        #expect(pipe.drain() == "<6>launched duration=\"12 ms\" event=didFinishLaunching service=analytics\n")
        log.error("two\nlines")
        #expect(pipe.drain() == "<3>two\n<3>lines service=analytics\n")
    }

    @Test("on a terminal, lines have no <N> prefix; warnings and worse name their level")
    func terminalLinesAreForPeople() throws {
        // A pseudo-terminal: /dev/ptmx, unlocked (TIOCSPTLCK), its number (TIOCGPTN) names the end to open.
        let controller = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(controller >= 0, "no /dev/ptmx")
        defer { close(controller) }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        #expect(ioctl(controller, 0x4004_5431, &unlock) == 0)
        #expect(ioctl(controller, 0x8004_5430, &number) == 0)
        let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        try #require(terminal >= 0)
        defer { close(terminal) }
        let handler = JournalLogHandler(label: "t", identifier: "apphostd", environment: [:], outputFD: terminal,
                                        levelControl: LogLevelControl(level: .trace), metadataProvider: nil)
        #expect(handler.destination == .plain(fd: terminal, prefixed: false))
        let pipe = Pipe()
        let piped = JournalLogHandler(label: "t", identifier: "apphostd", environment: [:], outputFD: pipe.writeEnd,
                                      levelControl: LogLevelControl(level: .trace), metadataProvider: nil)
        #expect(piped.destination == .plain(fd: pipe.writeEnd, prefixed: true))
        #expect(handler.plainLine(level: .info, message: "launched", metadata: ["event": "x"], error: nil, prefixed: false) == "launched event=x\n")
        #expect(handler.plainLine(level: .warning, message: "slow", metadata: [:], error: nil, prefixed: false) == "warning: slow\n")
    }

    @Test func levelsMapToSyslogPriorities() {
        let pipe = Pipe()
        let log = logger(to: pipe)
        log.trace("t"); log.debug("d"); log.info("i"); log.notice("n")
        log.warning("w"); log.error("e"); log.critical("c")
        #expect(pipe.drain() == "<7>t\n<7>d\n<6>i\n<5>n\n<4>w\n<3>e\n<2>c\n")
    }

    @Test func followsTheSharedLevelUnlessTheLoggerSetsItsOwn() {
        let pipe = Pipe()
        let control = LogLevelControl(level: .warning)
        var log = logger(to: pipe, control: control)
        log.info("hidden")
        log.warning("shown")
        #expect(pipe.drain() == "<4>shown\n")
        control.level = .debug
        log.debug("now shown")
        #expect(pipe.drain() == "<7>now shown\n")
        log.logLevel = .error
        log.warning("hidden again")
        control.level = .trace
        log.info("still hidden")
        log.error("own level")
        #expect(pipe.drain() == "<3>own level\n")
    }

    @Test func metadataKeysBecomeValidJournalFieldNames() {
        #expect(JournalLogHandler.journalFieldName("service") == "SERVICE")
        #expect(JournalLogHandler.journalFieldName("event") == "EVENT")
        #expect(JournalLogHandler.journalFieldName("message-id") == "MESSAGE_ID")
        #expect(JournalLogHandler.journalFieldName("message_id") == "MESSAGE_ID")
        #expect(JournalLogHandler.journalFieldName("a.b c") == "A_B_C")
        #expect(JournalLogHandler.journalFieldName("9lives") == "X_9LIVES")
        #expect(JournalLogHandler.journalFieldName("_pid") == "X__PID")
        #expect(JournalLogHandler.journalFieldName("") == "X_")
        #expect(JournalLogHandler.journalFieldName("message") == "X_MESSAGE")
        #expect(JournalLogHandler.journalFieldName("priority") == "X_PRIORITY")
        #expect(JournalLogHandler.journalFieldName("größe") == "GR__E")
        #expect(JournalLogHandler.journalFieldName(String(repeating: "k", count: 100)).count == 64)
    }

    @Test func nativeFieldsAreAssembledInOrder() {
        let handler = JournalLogHandler(
            label: "apphost.analytics", identifier: "apphostd", environment: [:],
            outputFD: -1, levelControl: LogLevelControl(), metadataProvider: nil)
        let fields = handler.journalFields(
            level: .notice, message: "hello\nworld",
            metadata: ["service": "analytics", "message-id": "abc", "message": "clash"],
            error: "boom", file: "AppHost/Host.swift", function: "launch()", line: 42)
        #expect(fields == [
            "MESSAGE=hello\nworld",
            "PRIORITY=5",
            "SYSLOG_IDENTIFIER=apphostd",
            "CODE_FILE=AppHost/Host.swift",
            "CODE_LINE=42",
            "CODE_FUNC=launch()",
            "LOGGER=apphost.analytics",
            "X_MESSAGE=clash",
            "MESSAGE_ID=abc",
            "SERVICE=analytics",
            "ERROR=boom",
        ])
    }

    @Test func journalStreamMustNameTheOutput() throws {
        let pipe = Pipe()
        var status = stat()
        #expect(fstat(pipe.writeEnd, &status) == 0)
        let matching = "\(status.st_dev):\(status.st_ino)"
        #expect(JournalLogHandler.isJournalStream(environment: ["JOURNAL_STREAM": matching], fd: pipe.writeEnd))
        #expect(!JournalLogHandler.isJournalStream(environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino + 1)"], fd: pipe.writeEnd))
        #expect(!JournalLogHandler.isJournalStream(environment: ["JOURNAL_STREAM": "garbage"], fd: pipe.writeEnd))
        #expect(!JournalLogHandler.isJournalStream(environment: [:], fd: pipe.writeEnd))
        let native = JournalLogHandler(label: "x", identifier: "apphostd", environment: ["JOURNAL_STREAM": matching],
                                       outputFD: pipe.writeEnd, levelControl: LogLevelControl(), metadataProvider: nil)
        // The journal's stream is journald's: the native protocol, through libsystemd.
        #expect(native.writesNativeJournal)
        let plain = JournalLogHandler(label: "x", identifier: "apphostd", environment: [:],
                                      outputFD: pipe.writeEnd, levelControl: LogLevelControl(), metadataProvider: nil)
        #expect(!plain.writesNativeJournal)
    }

    @Test func quotingKeepsValuesOneToken() {
        #expect(JournalLogHandler.quoted("plain") == "plain")
        #expect(JournalLogHandler.quoted("") == "\"\"")
        #expect(JournalLogHandler.quoted("a b") == "\"a b\"")
        #expect(JournalLogHandler.quoted("say \"hi\"\n") == "\"say \\\"hi\\\"\\n\"")
        #expect(JournalLogHandler.quoted("k=v") == "\"k=v\"")
        // The control characters, C0, DEL and C1, and only them among the rest.
        for control in ["\u{01}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}"] {
            #expect(JournalLogHandler.quoted("a\(control)b") == "\"a\(control)b\"")
        }
        for other in ["café", "\u{A0}", "\u{2028}", "ж"] {
            #expect(JournalLogHandler.quoted(other) == other)
        }
    }
}

import Foundation
import Testing

extension IntegrationSuites {
    /// The daemon's own records in the journal: native protocol with structured fields.
    @Suite(
        .serialized,
        .enabled(if: IntegrationEnvironment.canRunDaemon, "needs root, unshare, systemd and the apphostd binary (reason printed)")
    )
    struct DaemonJournalTests {
        @Test("records carry SYSLOG_IDENTIFIER, PRIORITY, CODE_FILE/LINE/FUNC and metadata fields such as SERVICE and EVENT")
        func structuredFields() async throws {
            try await DaemonUnderTest.with(services: [ProbeSpec("probe")], extraServices: ["  - logger"]) { daemon in
                try await daemon.startOrFail()
                var match: [String: String]?
                try await daemon.waitUntil("the logger's didBecomeActive record is in the journal") {
                    match = try await daemon.daemonRecords().first { $0["EVENT"] == "didBecomeActive" && $0["SERVICE"] == "logger" }
                    return match != nil
                }
                let record = try #require(match)
                let text = record.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
                #expect(record["SYSLOG_IDENTIFIER"] == "apphostd", "\(text)")
                #expect(record["_TRANSPORT"] == "journal", "not the native protocol: \(text)")
                #expect(record["PRIORITY"].flatMap(Int.init).map { (0...7).contains($0) } == true, "\(text)")
                #expect(record["CODE_FILE"]?.hasSuffix(".swift") == true, "\(text)")
                #expect(record["CODE_LINE"].flatMap(Int.init).map { $0 > 0 } == true, "\(text)")
                #expect(record["CODE_FUNC"]?.isEmpty == false, "\(text)")
                #expect(record["MESSAGE"]?.isEmpty == false, "\(text)")
                #expect(record["_SYSTEMD_USER_UNIT"] == daemon.unitName, "\(text)")

                // Nothing the daemon logs may fall back to `<N>` lines on the stream.
                let stream = try await daemon.sandbox.journal(["_SYSTEMD_USER_UNIT=\(daemon.unitName)", "_TRANSPORT=stdout"])
                #expect(stream.isEmpty, "plain stderr lines under systemd: \(stream.prefix(5).map { $0["MESSAGE"] ?? "" })")
            }
        }
    }
}

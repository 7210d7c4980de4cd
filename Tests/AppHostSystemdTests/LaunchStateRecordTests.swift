import AppHostTestSupport
import Foundation
import Testing

import AppHost

@testable import AppHostSystemd

@Suite struct LaunchStateRecordTests {
    let record = LaunchStateFiles.Record(
        installationID: InstallationID("56DD86DC-522B-4402-8894-E1F3217DDD93")!,
        launchCount: 42,
        lastLaunch: UnixTime(iso8601: "2026-11-23T12:49:53Z")!
    )

    @Test func writesWhatJSONEncoderWrote() throws {
        struct Codable_: Codable {
            var installationID: UUID
            var launchCount: Int
            var lastLaunch: Date
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let earlier = try encoder.encode(Codable_(installationID: UUID(uuidString: record.installationID.description)!, launchCount: 42, lastLaunch: Date(timeIntervalSince1970: record.lastLaunch.secondsSince1970)))
        #expect(String(decoding: record.json, as: UTF8.self) == String(decoding: earlier, as: UTF8.self))
        #expect(try LaunchStateFiles.Record(json: Array(earlier)) == record)
    }

    @Test func readsAnyOrderAndSpacingAndIgnoresOtherKeys() throws {
        let compact = #"{"launchCount":42,"note":"by hand \"quoted\"","lastLaunch":"2026-11-23T12:49:53Z","installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","extra":-1}"#
        #expect(try LaunchStateFiles.Record(json: Array(compact.utf8)) == record)
        #expect(try LaunchStateFiles.Record(json: record.json + Array("\n\n".utf8)) == record)
    }

    @Test(arguments: [
        "", "{not json", "{}", "[1]", #"{"launchCount":42}"#,
        #"{"installationID":"nope","lastLaunch":"2026-11-23T12:49:53Z","launchCount":1}"#,
        #"{"installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","lastLaunch":"yesterday","launchCount":1}"#,
        #"{"installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","lastLaunch":"2026-11-23T12:49:53Z","launchCount":-3}"#,
        #"{"installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","lastLaunch":"2026-11-23T12:49:53Z","launchCount":1.5}"#,
        #"{"installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","lastLaunch":"2026-11-23T12:49:53Z","launchCount":1} x"#,
        #"{"installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","lastLaunch":"2026-11-23T12:49:53Z","launchCount":1"#,
        #"{"installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93,"#,
    ])
    func refusesWhatIsNotARecord(text: String) {
        #expect(throws: LaunchStateFiles.Record.FormatError.self) { try LaunchStateFiles.Record(json: Array(text.utf8)) }
    }

    @Test("a launch-state file Foundation's JSONEncoder wrote is read and counted on")
    func readsOlderLaunchState() throws {
        let directory = try makeTemporaryDirectory("launch-state")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = #"{"installationID":"D11BDF5B-852E-76B0-7177-4A8B318163E6","lastLaunch":"2026-11-22T08:00:00Z","launchCount":7}"#
        try old.write(toFile: directory + "/launch-state.json", atomically: true, encoding: .utf8)
        let options = try LaunchStateFiles(directory: directory).beginLaunch()
        #expect(options.launchCount == 8)
        #expect(options.installationID.description == "D11BDF5B-852E-76B0-7177-4A8B318163E6")
        let launchDate = try #require(options.launchDate)
        let rewritten = try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8)
        #expect(rewritten.contains(#""lastLaunch" : "\#(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: launchDate.secondsSince1970)))""#))
    }
}

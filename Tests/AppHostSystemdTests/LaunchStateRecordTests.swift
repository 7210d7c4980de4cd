import Foundation
import Testing

@testable import AppHostSystemd

@Suite struct LaunchStateRecordTests {
    let record = LaunchStateStore.Record(
        installationID: UUID(uuidString: "56DD86DC-522B-4402-8894-E1F3217DDD93")!,
        launchCount: 42,
        lastLaunch: ISO8601Timestamp.date(from: "2026-11-23T12:49:53Z")!
    )

    @Test func writesWhatJSONEncoderWrote() throws {
        struct Codable_: Codable {
            var installationID: UUID
            var launchCount: Int
            var lastLaunch: Date
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = ISO8601Timestamp.encodingStrategy
        let earlier = try encoder.encode(Codable_(installationID: record.installationID, launchCount: 42, lastLaunch: record.lastLaunch))
        #expect(String(decoding: record.json, as: UTF8.self) == String(decoding: earlier, as: UTF8.self))
        #expect(try LaunchStateStore.Record(json: Array(earlier)) == record)
    }

    @Test func readsAnyOrderAndSpacingAndIgnoresOtherKeys() throws {
        let compact = #"{"launchCount":42,"note":"by hand \"quoted\"","lastLaunch":"2026-11-23T12:49:53Z","installationID":"56DD86DC-522B-4402-8894-E1F3217DDD93","extra":-1}"#
        #expect(try LaunchStateStore.Record(json: Array(compact.utf8)) == record)
        #expect(try LaunchStateStore.Record(json: record.json + Array("\n\n".utf8)) == record)
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
        #expect(throws: LaunchStateStore.Record.FormatError.self) { try LaunchStateStore.Record(json: Array(text.utf8)) }
    }
}

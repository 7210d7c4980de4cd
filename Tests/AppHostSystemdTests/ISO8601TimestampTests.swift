import Foundation
import Testing

@testable import AppHostSystemd

@Suite("ISO8601Timestamp")
struct ISO8601TimestampTests {
    @Test("writes what JSONEncoder's .iso8601 wrote, so older launch-state files still read")
    func matchesFoundationsFormat() throws {
        for seconds in [0.0, 951_782_400, 1_795_435_498.7, 4_102_444_799] {
            let date = Date(timeIntervalSince1970: seconds)
            let foundation = ISO8601DateFormatter().string(from: date)
            #expect(ISO8601Timestamp.string(from: date) == foundation)
            #expect(ISO8601Timestamp.date(from: foundation) == Date(timeIntervalSince1970: seconds.rounded(.down)))
        }
    }

    @Test("refuses what is not a UTC timestamp", arguments: ["", "2026-11-23", "2026-11-23T11:56:36+01:00", "2026-13-01T00:00:00Z", "2026-11-23T11:5a:36Z", "2026-11-23 11:56:36Z"])
    func refusesOtherText(_ text: String) {
        #expect(ISO8601Timestamp.date(from: text) == nil)
    }

    @Test("a launch-state file written by the .iso8601 strategy decodes with the new one")
    func readsOlderLaunchState() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iso8601-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let old = #"{"installationID":"D11BDF5B-852E-76B0-7177-4A8B318163E6","lastLaunch":"2026-11-22T08:00:00Z","launchCount":7}"#
        try old.write(toFile: directory + "/launch-state.json", atomically: true, encoding: .utf8)
        let options = try LaunchStateStore(directory: directory).beginLaunch()
        #expect(options.launchCount == 8)
        #expect(options.installationID.uuidString == "D11BDF5B-852E-76B0-7177-4A8B318163E6")
        let rewritten = try String(contentsOfFile: directory + "/launch-state.json", encoding: .utf8)
        #expect(rewritten.contains(#""lastLaunch" : "\#(ISO8601Timestamp.string(from: options.launchDate))""#))
    }
}

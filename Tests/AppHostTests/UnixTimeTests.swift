import Foundation
import Testing

@testable import AppHost

@Suite("UnixTime and InstallationID")
struct UnixTimeTests {
    @Test("writes ISO 8601 as Foundation's formatter does, so older state files still read")
    func matchesFoundationsFormat() throws {
        var generator = SystemRandomNumberGenerator()
        let samples = [0.0, -1, -86_400.5, 951_782_400, 1_795_435_498.7, 4_102_444_799, 253_402_300_799]
            // Quarter seconds: Foundation's Date counts from 2001 in a Double and rounds an
            // instant a few ulps below a whole second up, which no state file ever held.
            + (0..<2000).map { _ in Double(Int.random(in: -2_000_000_000...9_000_000_000, using: &generator)) + 0.25 }
        for seconds in samples {
            let foundation = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))
            let time = UnixTime(secondsSince1970: seconds)
            #expect(time.iso8601 == foundation)
            #expect(UnixTime(iso8601: foundation) == UnixTime(secondsSince1970: seconds.rounded(.down)))
        }
    }

    @Test("refuses what is not a UTC timestamp of a real date", arguments: [
        "", "2026-11-23", "2026-11-23T11:56:36+01:00", "2026-13-01T00:00:00Z", "2026-11-23T11:5a:36Z",
        "2026-11-23 11:56:36Z", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-11-23T24:00:00Z",
    ])
    func refusesOtherText(_ text: String) {
        #expect(UnixTime(iso8601: text) == nil)
    }

    @Test func acceptsALeapDay() {
        #expect(UnixTime(iso8601: "2024-02-29T12:00:00Z")?.iso8601 == "2024-02-29T12:00:00Z")
    }

    @Test("an installation id reads and writes as Foundation's UUID does")
    func installationIDMatchesUUID() throws {
        for _ in 0..<200 {
            let uuid = UUID()
            let id = try #require(InstallationID(uuid.uuidString))
            #expect(id.description == uuid.uuidString)
            #expect(InstallationID(uuid.uuidString.lowercased()) == id)
        }
        for _ in 0..<200 {
            let id = InstallationID()
            let uuid = try #require(UUID(uuidString: id.description))
            #expect(uuid.uuidString == id.description)
            #expect(id.description.split(separator: "-")[2].first == "4", "a version 4 UUID")
        }
    }

    @Test("refuses what is not a UUID", arguments: ["", "nope", "56DD86DC-522B-4402-8894-E1F3217DDD9", "56DD86DC-522B-4402-8894-E1F3217DDD93-", "56DD86DC522B-4402-8894-E1F3217DDD93A", "56DD86DC-522B-4402-8894-E1F3217DDDG3"])
    func refusesOtherIDs(_ text: String) {
        #expect(InstallationID(text) == nil)
    }

    @Test(arguments: [(12.5, 2, "12.50"), (0.004, 2, "0.00"), (0.005, 2, "0.01"), (-3.14159, 1, "-3.1"), (9.96, 1, "10.0"), (7, 0, "7"), (-0.04, 1, "0.0")])
    func decimalTextMatchesPrintf(value: Double, digits: Int, expected: String) {
        #expect(value.decimalText(digits: digits) == expected)
        #expect(value.decimalText(digits: digits) == String(format: "%.\(digits)f", value) || value == 0.005 || value == -0.04)
    }
}

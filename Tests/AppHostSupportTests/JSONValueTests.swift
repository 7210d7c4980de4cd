@testable import AppHostSupport
import Foundation
import Testing


@Suite struct JSONValueTests {
    @Test("reads what JSONSerialization reads, and writes what it reads back equal")
    func roundTripsAgainstFoundation() throws {
        let text = #"{"a":[1,-2.5,3e2,true,false,null],"b":{"c":"line\nbreak \"quoted\" \\ \/ \u00e9 \ud83d\ude00 tab\t"},"d":"","e":[],"f":{}}"#
        let value = try JSONValue(parsing: Array(text.utf8))
        #expect(value["a"] == .array([.number(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null]))
        #expect(value["b"]?["c"]?.string == "line\nbreak \"quoted\" \\ / é 😀 tab\t")
        for pretty in [false, true] {
            let written = value.rendered(pretty: pretty)
            #expect(try JSONValue(parsing: Array(written.utf8)) == value)
            let foundation = try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any]
            #expect((foundation?["b"] as? [String: String])?["c"] == "line\nbreak \"quoted\" \\ / é 😀 tab\t")
        }
    }

    @Test("numbers are written as JSONEncoder writes them", arguments: [0.0, 1, -7, 12.5, 0.1, 1_795_435_498.7, 3725, 1e-7, 9_007_199_254_740_992])
    func numbersMatchJSONEncoder(_ number: Double) throws {
        let encoder = JSONEncoder()
        let foundation = String(decoding: try encoder.encode([number]), as: UTF8.self)
        #expect(JSONValue.array([.number(number)]).rendered() == foundation)
    }

    @Test("control characters are escaped")
    func escapesControlCharacters() {
        #expect(JSONValue.string("a\u{01}b").rendered() == #""a\u0001b""#)
    }

    @Test("refuses what is not one JSON value", arguments: [
        "", " ", "{", "{\"a\":}", "{\"a\":1,}", "[1,]", "[1 2]", "01x", "tru", "\"unterminated", "\"bad \\q escape\"",
        "\"\\ud83d alone\"", "{\"a\":1} trailing", "1.", "-", "1e", "\"tab\tinside\"", "{1:2}", "// comment",
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
    ])
    func refusesBadText(_ text: String) {
        #expect(throws: JSONValue.FormatError.self) { try JSONValue(parsing: Array(text.utf8)) }
    }

    // Found by the json fuzz target (Fuzz/Corpus/json/number-past-double): accepted as infinity,
    // written back as null, so a state file would not read back as it was written.
    @Test("a number past Double's range is refused, not read as infinity", arguments: ["1e400", "-1e400", "12345678901234567890123456781e3084567890"])
    func numbersPastDoublesRangeAreRefused(_ text: String) {
        #expect(throws: JSONValue.FormatError.self) { try JSONValue(parsing: Array(text.utf8)) }
    }

    @Test func integersAreWholeNumbersOnly() throws {
        #expect(try JSONValue(parsing: Array("42".utf8)).integer == 42)
        #expect(try JSONValue(parsing: Array("4.2".utf8)).integer == nil)
        #expect(try JSONValue(parsing: Array("1e300".utf8)).integer == nil)
    }
}

/// A JSON document as the daemon's state files hold them: launch state, the analytics summary
/// and event log, `apphostd analytics --json`. Read and written here rather than with
/// Foundation's `JSONEncoder`, which would bring Foundation into the binary.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// Every number; integers up to 2^53 are exact, as in JavaScript.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Why a text is not the JSON expected.
    package struct FormatError: Error, CustomStringConvertible, Sendable {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The member `key` of an object, nil for anything else.
    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    /// The text of a string.
    package var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The value of a number.
    package var number: Double? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The value of a number that is a whole integer.
    package var integer: Int? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
              let integer = Int(exactly: value) else { return nil }
        return integer
    }

    /// The value of a boolean.
    package var bool: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// An object of the members whose values are not nil.
    package static func object(_ members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        var table: [String: JSONValue] = [:]
        for (key, value) in members { if let value { table[key] = value } }
        return .object(table)
    }
}

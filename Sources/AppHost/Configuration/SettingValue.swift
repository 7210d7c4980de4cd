/// A configuration value as the config file gave it, independent of the file format.
///
/// The daemon turns YAML into these; services read them through `ServiceSection`'s typed
/// accessors, which turn a wrong type into a `ConfigurationError` naming the key.
public indirect enum SettingValue: Sendable, Hashable, CustomStringConvertible {
    /// An empty value (`key:` or `key: null`).
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number.
    case int(Int)
    /// A number with a fraction or exponent.
    case double(Double)
    /// Text, quoted or not; durations such as `5s` are strings until read as durations.
    case string(String)
    /// A list.
    case array([SettingValue])
    /// A mapping of keys to values.
    case table([String: SettingValue])

    /// The type's name as an error message says it ("a string", "a list").
    public var typeName: String {
        switch self {
        case .null: "nothing"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string: "a string"
        case .array: "a list"
        case .table: "a mapping"
        }
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "\"\(value)\""
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .table(let table):
            "{" + table.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

/// Settings written in Swift the way a config file writes them:
/// `["interval": "1s", "required": true, "levels": ["warning", "critical"]]`.
extension SettingValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `nil` is `.null`, what an empty YAML value gives.
    public init(nilLiteral: ()) { self = .null }

    /// `true` is `.bool(true)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// `5` is `.int(5)`.
    public init(integerLiteral value: Int) { self = .int(value) }

    /// `1.5` is `.double(1.5)`.
    public init(floatLiteral value: Double) { self = .double(value) }

    /// `"1s"` is `.string("1s")`.
    public init(stringLiteral value: String) { self = .string(value) }

    /// `["a", 1]` is `.array`.
    public init(arrayLiteral elements: SettingValue...) { self = .array(elements) }

    /// `["key": "value"]` is `.table`; a repeated key keeps the last value.
    public init(dictionaryLiteral elements: (String, SettingValue)...) {
        self = .table(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

/// A settings section written as a literal: `let settings: ServiceSection = ["interval": "1s"]`.
extension ServiceSection: ExpressibleByDictionaryLiteral {
    /// The section with these settings, at key path `settings` and no file.
    public init(dictionaryLiteral elements: (String, SettingValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension ServiceSection {
    /// For a string that would be right without its quotes (`"1"` for an integer, `"true"` for a
    /// boolean): how to write it, in the config file and in a test's settings dictionary, whose
    /// literals are typed (`["count": 1]`, not `["count": "1"]`). Nil for anything else.
    static func unquoteHint(_ key: String, _ value: SettingValue, if parses: (String) -> Bool) -> String? {
        guard case .string(let text) = value, parses(text) else { return nil }
        return "write it without quotes: \(text), not \"\(text)\"; in a test's settings dictionary too: [\"\(key)\": \(text)]"
    }
}

extension JSONValue {
    /// JSON text with keys sorted: on one line, or `pretty` with two-space indents and
    /// `"key" : value`, the layout `JSONEncoder`'s `.prettyPrinted` wrote before.
    package func rendered(pretty: Bool = false) -> String {
        var text = ""
        render(into: &text, pretty: pretty, indent: "")
        return text
    }

    private func render(into text: inout String, pretty: Bool, indent: String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += Self.numberText(value)
        case .string(let value): Self.appendQuoted(value, to: &text)
        case .array(let items):
            // Empty, pretty: a blank line inside, as JSONEncoder writes it.
            guard !items.isEmpty else { text += pretty ? "[\n\n" + indent + "]" : "[]"; return }
            let inner = indent + "  "
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                if pretty { text += "\n" + inner }
                item.render(into: &text, pretty: pretty, indent: inner)
            }
            text += pretty ? "\n" + indent + "]" : "]"
        case .object(let members):
            guard !members.isEmpty else { text += pretty ? "{\n\n" + indent + "}" : "{}"; return }
            let inner = indent + "  "
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                if pretty { text += "\n" + inner }
                Self.appendQuoted(key, to: &text)
                text += pretty ? " : " : ":"
                members[key]!.render(into: &text, pretty: pretty, indent: inner)
            }
            text += pretty ? "\n" + indent + "}" : "}"
        }
    }

    /// Whole numbers without a fraction (`12`, not `12.0`); others in Swift's shortest form that
    /// reads back equal. JSON has no infinities or NaN: they are written as `null`.
    static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        // 0x1p63 is 2^63, exactly: every whole number below it in magnitude fits an Int64.
        if value.rounded(.towardZero) == value, abs(value) < 0x1p63 {
            return String(Int64(value))
        }
        return value.description
    }

    static func appendQuoted(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

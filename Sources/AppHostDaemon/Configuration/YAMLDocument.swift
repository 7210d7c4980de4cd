import AppHost

/// One config file's YAML turned into `SettingValue`s, with the line of every key path.
///
/// Parsed by libyaml, event by event. A config file needs none of YAML's graph features, so
/// anchors, aliases and tags are refused (no alias can expand into a "billion laughs"), as are
/// a second document and nesting deeper than `depthLimit`. Scalars follow the YAML 1.2 core
/// schema, not YAML 1.1: `yes`, `on` and dates stay strings, and anything quoted is a string.
/// That keeps `required: yes` from silently meaning `true` and keeps the typed accessors strict.
struct YAMLDocument: Sendable {
    /// The whole document.
    var root: SettingValue
    /// 1-based lines by full key path (`host.log-level`, `services[1].settings.level`).
    var lines: [String: Int]

    /// Deepest nesting of lists and mappings a file may have; apphostd's own need 4.
    static let depthLimit = 32

    /// Parses exactly one YAML document from `text`.
    static func parse(_ text: String, file: String) throws(ConfigurationError) -> YAMLDocument {
        let reader = YAMLEventReader(text: text, file: file)
        _ = try reader.next()
        let start = try reader.next()
        guard case .documentStart = start.event else {
            throw ConfigurationError(
                file: file, keyPath: "", message: "the file has no settings, only whitespace or comments",
                hint: "start from the documented config/apphostd.yaml"
            )
        }
        var converter = Converter(reader: reader, file: file)
        let root = try converter.convert(try reader.next(), path: "", depth: 0)
        _ = try reader.next()
        let after = try reader.next()
        if case .documentStart = after.event {
            let line = (try? reader.next())?.line ?? after.line
            throw ConfigurationError(
                file: file, line: line, keyPath: "", message: "the file holds more than one YAML document",
                hint: "keep one document; remove the second '---'"
            )
        }
        return YAMLDocument(root: root, lines: converter.lines)
    }

    /// Builds values from the reader's events depth first, noting the line of every key path.
    private struct Converter {
        let reader: YAMLEventReader
        let file: String
        var lines: [String: Int] = [:]

        init(reader: YAMLEventReader, file: String) {
            self.reader = reader
            self.file = file
        }

        mutating func convert(_ node: YAMLEventReader.Located, path: String, depth: Int) throws(ConfigurationError) -> SettingValue {
            if lines[path] == nil { lines[path] = node.line }
            switch node.event {
            case .scalar(let text, let anchor, let tag, let plain):
                try refuse(anchor: anchor, tag: tag, at: node, path: path)
                return try Self.value(of: text, plain: plain, line: node.line, file: file, path: path)
            case .alias(let anchor):
                throw ConfigurationError(
                    file: file, line: node.line, keyPath: path, message: "found undefined alias *\(anchor)",
                    hint: "a config file has no anchors or aliases; write the value out"
                )
            case .sequenceStart(let anchor, let tag):
                try refuse(anchor: anchor, tag: tag, at: node, path: path)
                try checkDepth(depth, at: node, path: path)
                var items: [SettingValue] = []
                while true {
                    let item = try reader.next()
                    if case .sequenceEnd = item.event { break }
                    items.append(try convert(item, path: "\(path)[\(items.count)]", depth: depth + 1))
                }
                return .array(items)
            case .mappingStart(let anchor, let tag):
                try refuse(anchor: anchor, tag: tag, at: node, path: path)
                try checkDepth(depth, at: node, path: path)
                var table: [String: SettingValue] = [:]
                var firstLines: [String: Int] = [:]
                while true {
                    let keyNode = try reader.next()
                    let key: String
                    switch keyNode.event {
                    case .mappingEnd:
                        return .table(table)
                    case .scalar(let text, let anchor, let tag, _):
                        try refuse(anchor: anchor, tag: tag, at: keyNode, path: path)
                        key = text
                    case .alias(let anchor):
                        throw ConfigurationError(
                            file: file, line: keyNode.line, keyPath: path, message: "found undefined alias *\(anchor)",
                            hint: "a config file has no anchors or aliases; write the key out"
                        )
                    default:
                        let found = if case .mappingStart = keyNode.event { "mapping" } else { "list" }
                        throw ConfigurationError(
                            file: file, line: keyNode.line, keyPath: path,
                            message: "a key must be plain text, found a \(found) as a key"
                        )
                    }
                    let keyPath = path.isEmpty ? key : "\(path).\(key)"
                    if let first = firstLines[key] {
                        throw ConfigurationError(
                            file: file, line: keyNode.line, keyPath: keyPath, message: "duplicate key \"\(key)\" in one mapping",
                            hint: "first given at line \(first); each key may appear once"
                        )
                    }
                    firstLines[key] = keyNode.line
                    lines[keyPath] = keyNode.line
                    table[key] = try convert(try reader.next(), path: keyPath, depth: depth + 1)
                }
            case .streamStart, .streamEnd, .documentStart, .documentEnd, .sequenceEnd, .mappingEnd:
                throw ConfigurationError(file: file, line: node.line, keyPath: path, message: "YAML error: a value is missing")
            }
        }

        private func refuse(anchor: String?, tag: String?, at node: YAMLEventReader.Located, path: String) throws(ConfigurationError) {
            if let anchor {
                throw ConfigurationError(
                    file: file, line: node.line, keyPath: path, message: "anchors are not supported (found &\(anchor))",
                    hint: "a config file has no anchors or aliases; write each value out"
                )
            }
            if let tag {
                let coreTag = "tag:yaml.org,2002:"
                let written = tag.hasPrefix(coreTag) ? "!!" + tag.dropFirst(coreTag.count) : tag
                throw ConfigurationError(
                    file: file, line: node.line, keyPath: path, message: "unsupported YAML tag \(written)",
                    hint: "plain values need no tags; quote a value to make it text"
                )
            }
        }

        private func checkDepth(_ depth: Int, at node: YAMLEventReader.Located, path: String) throws(ConfigurationError) {
            guard depth >= YAMLDocument.depthLimit else { return }
            throw ConfigurationError(
                file: file, line: node.line, keyPath: path,
                message: "lists and mappings nest deeper than \(YAMLDocument.depthLimit) levels",
                hint: "a config file needs a handful of levels; is this the right file?"
            )
        }

        /// A scalar by the YAML 1.2 core schema; quoted and block scalars are always strings.
        static func value(of text: String, plain: Bool, line: Int, file: String, path: String) throws(ConfigurationError) -> SettingValue {
            guard plain else { return .string(text) }
            if let value = coreValue(text) {
                if case .string = value, looksNumeric(text) {
                    throw ConfigurationError(
                        file: file, line: line, keyPath: path, message: "number \(text) is out of range",
                        hint: "quote it to mean text"
                    )
                }
                return value
            }
            return .string(text)
        }

        static func looksNumeric(_ text: String) -> Bool {
            var digits = text.utf8[...]
            if digits.first == UInt8(ascii: "-") || digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
            return !digits.isEmpty && digits.allSatisfy(isDigit)
        }

        /// Core schema resolution of a plain scalar.
        static func coreValue(_ text: String) -> SettingValue? {
            switch text {
            case "", "~", "null", "Null", "NULL": return .null
            case "true", "True", "TRUE": return .bool(true)
            case "false", "False", "FALSE": return .bool(false)
            case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .double(.infinity)
            case "-.inf", "-.Inf", "-.INF": return .double(-.infinity)
            case ".nan", ".NaN", ".NAN": return .double(.nan)
            default: break
            }
            if looksNumeric(text) {
                return Int(text.first == "+" ? String(text.dropFirst()) : text).map(SettingValue.int) ?? .string(text)
            }
            if text.hasPrefix("0x"), let value = Int(text.dropFirst(2), radix: 16) { return .int(value) }
            if text.hasPrefix("0o"), let value = Int(text.dropFirst(2), radix: 8) { return .int(value) }
            if isCoreFloat(text), let value = Double(text) { return .double(value) }
            return nil
        }

        /// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
        static func isCoreFloat(_ text: String) -> Bool {
            var rest = text.utf8[...]
            if rest.first == UInt8(ascii: "-") || rest.first == UInt8(ascii: "+") { rest = rest.dropFirst() }
            let whole = rest.prefix(while: isDigit)
            rest = rest.dropFirst(whole.count)
            var fraction = rest.prefix(0)
            if rest.first == UInt8(ascii: ".") {
                rest = rest.dropFirst()
                fraction = rest.prefix(while: isDigit)
                rest = rest.dropFirst(fraction.count)
            }
            guard !whole.isEmpty || !fraction.isEmpty else { return false }
            if rest.first == UInt8(ascii: "e") || rest.first == UInt8(ascii: "E") {
                rest = rest.dropFirst()
                if rest.first == UInt8(ascii: "-") || rest.first == UInt8(ascii: "+") { rest = rest.dropFirst() }
                let exponent = rest.prefix(while: isDigit)
                guard !exponent.isEmpty else { return false }
                rest = rest.dropFirst(exponent.count)
            }
            return rest.isEmpty
        }

        static func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }
    }
}

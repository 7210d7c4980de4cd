import AppHost
import Foundation
import Yams

/// One config file's YAML turned into `ConfigValue`s, with the line of every key path.
///
/// Scalars follow the YAML 1.2 core schema, not Yams's YAML 1.1 resolver: `yes`, `on` and
/// dates stay strings, and anything quoted is a string. That keeps `required: yes` from
/// silently meaning `true` and keeps the typed accessors strict.
struct YAMLDocument: Sendable {
    /// The whole document.
    var root: ConfigValue
    /// 1-based lines by full key path (`host.log-level`, `services[1].settings.level`).
    var lines: [String: Int]

    /// Most values a file may expand to; an alias bomb ("billion laughs") stops here.
    static let valueLimit = 100_000

    /// Parses exactly one YAML document from `text`.
    static func parse(_ text: String, file: String) throws(ConfigurationError) -> YAMLDocument {
        let node: Node
        do {
            let parser = try Parser(yaml: text, resolver: .basic, encoding: .utf8)
            guard let first = try parser.nextRoot() else {
                throw ConfigurationError(
                    file: file, keyPath: "", message: "the file has no settings, only whitespace or comments",
                    hint: "start from the documented config/apphostd.yaml"
                )
            }
            if let second = try parser.nextRoot() {
                throw ConfigurationError(
                    file: file, line: second.mark?.line, keyPath: "",
                    message: "the file holds more than one YAML document",
                    hint: "keep one document; remove the second '---'"
                )
            }
            node = first
        } catch let error as ConfigurationError {
            throw error
        } catch let error as YamlError {
            throw syntaxError(error, text: text, file: file)
        } catch {
            throw ConfigurationError(file: file, keyPath: "", message: "YAML error: \(error)")
        }
        var converter = Converter(file: file)
        let root = try converter.convert(node, path: "")
        return YAMLDocument(root: root, lines: converter.lines)
    }

    /// Yams's error told as `FILE:LINE: YAML syntax error: ...`, with a hint for tabs.
    static func syntaxError(_ error: YamlError, text: String, file: String) -> ConfigurationError {
        func located(_ context: YamlError.Context?, _ problem: String, _ mark: Mark) -> ConfigurationError {
            var message = "YAML syntax error at column \(mark.column): \(problem)"
            if let context { message += " (\(context.text) at line \(context.mark.line))" }
            let lineText = text.split(separator: "\n", omittingEmptySubsequences: false)
                .dropFirst(max(mark.line - 1, 0)).first ?? ""
            let hint: String? = lineText.contains("\t")
                ? "YAML does not allow tabs for indentation; indent with spaces" : nil
            return ConfigurationError(file: file, line: mark.line, keyPath: "", message: message, hint: hint)
        }
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _),
             let .composer(context, problem, mark, _):
            return located(context, problem, mark)
        case let .reader(problem, offset, value, _):
            var line: Int?
            if let offset {
                line = text.prefix(offset).reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
            }
            let byte = value >= 0 ? " (character 0x\(String(value, radix: 16)))" : ""
            return ConfigurationError(
                file: file, line: line, keyPath: "", message: "unreadable YAML: \(problem)\(byte)",
                hint: "a config file is plain UTF-8 text"
            )
        case let .duplicatedKeysInMapping(duplicates, context):
            // Yams marks the first occurrence; point at the repeat, which is what to delete.
            let keys = duplicates.map { "\"\($0)\"" }.joined(separator: ", ")
            let first = context.mark
            let repeatLine = duplicates.first.flatMap { repeatedKeyLine($0, after: first, in: text) }
            return ConfigurationError(
                file: file, line: repeatLine ?? first.line, keyPath: "",
                message: "duplicate key \(keys) in one mapping",
                hint: "first given at line \(first.line); each key may appear once"
            )
        default:
            return ConfigurationError(file: file, keyPath: "", message: "YAML error: \(error)")
        }
    }

    /// The line of the next block-mapping key `key` at the same column as the first one.
    static func repeatedKeyLine(_ key: String, after first: Mark, in text: String) -> Int? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let indent = first.column - 1
        guard first.line < lines.count else { return nil }
        for index in first.line..<lines.count {
            let line = lines[index]
            let leading = line.prefix { $0 == " " }
            if leading.count < indent, !line.trimmingSpaces.isEmpty,
               !line.trimmingSpaces.hasPrefix("#") { return nil }
            guard leading.count == indent else { continue }
            let rest = line.dropFirst(indent)
            for spelling in [key, "\"\(key)\"", "'\(key)'"] where rest.hasPrefix(spelling + ":") {
                return index + 1
            }
        }
        return nil
    }

    /// Walks the node tree depth first, counting values against `valueLimit`.
    private struct Converter {
        let file: String
        var lines: [String: Int] = [:]
        var count = 0

        init(file: String) { self.file = file }

        mutating func convert(_ node: Node, path: String) throws(ConfigurationError) -> ConfigValue {
            count += 1
            if count > YAMLDocument.valueLimit {
                throw ConfigurationError(
                    file: file, line: node.mark?.line, keyPath: path,
                    message: "the document expands to more than \(YAMLDocument.valueLimit) values",
                    hint: "aliases that repeat aliases multiply; write the config out plainly"
                )
            }
            if lines[path] == nil, let line = node.mark?.line { lines[path] = line }
            switch node {
            case .scalar(let scalar):
                return try Self.value(of: scalar, file: file, path: path)
            case .alias(let alias):
                throw ConfigurationError(file: file, line: alias.mark?.line, keyPath: path, message: "unresolved alias")
            case .sequence(let sequence):
                var items: [ConfigValue] = []
                for (index, item) in sequence.enumerated() {
                    items.append(try convert(item, path: "\(path)[\(index)]"))
                }
                return .array(items)
            case .mapping(let mapping):
                var table: [String: ConfigValue] = [:]
                var firstLines: [String: Int] = [:]
                for (keyNode, valueNode) in mapping {
                    guard case .scalar(let keyScalar) = keyNode else {
                        throw ConfigurationError(
                            file: file, line: keyNode.mark?.line, keyPath: path,
                            message: "a key must be plain text, found a \(keyNode.mapping != nil ? "mapping" : "list") as a key"
                        )
                    }
                    let key = keyScalar.string
                    let keyPath = path.isEmpty ? key : "\(path).\(key)"
                    let line = keyScalar.mark?.line
                    if table[key] != nil {
                        throw ConfigurationError(
                            file: file, line: line, keyPath: keyPath, message: "duplicate key \"\(key)\"",
                            hint: "first given at line \(firstLines[key].map(String.init) ?? "?"); each key may appear once"
                        )
                    }
                    if let line { lines[keyPath] = line; firstLines[key] = line }
                    table[key] = try convert(valueNode, path: keyPath)
                }
                return .table(table)
            }
        }

        /// A scalar by the YAML 1.2 core schema; quoted and block scalars are always strings.
        static func value(of scalar: Node.Scalar, file: String, path: String) throws(ConfigurationError) -> ConfigValue {
            let text = scalar.string
            let tag = scalar.tag.description
            let coreTag = "tag:yaml.org,2002:"
            if tag.hasPrefix(coreTag) {
                // An explicit tag such as `!!str 5` or `!!int "5"` decides the type.
                let name = String(tag.dropFirst(coreTag.count))
                if name == "str" { return .string(text) }
                if let value = coreValue(text), value.tagName == name { return value }
                throw ConfigurationError(
                    file: file, line: scalar.mark?.line, keyPath: path, message: "\"\(text)\" is not a valid !!\(name)"
                )
            }
            if !tag.isEmpty && tag != "!" && tag != "?" {
                throw ConfigurationError(
                    file: file, line: scalar.mark?.line, keyPath: path, message: "unsupported YAML tag \(tag)",
                    hint: "plain values need no tags"
                )
            }
            guard scalar.style == .plain || scalar.style == .any, tag != "!" else { return .string(text) }
            if let value = coreValue(text) {
                if case .string = value, looksNumeric(text) {
                    throw ConfigurationError(
                        file: file, line: scalar.mark?.line, keyPath: path, message: "number \(text) is out of range",
                        hint: "quote it to mean text"
                    )
                }
                return value
            }
            return .string(text)
        }

        static func looksNumeric(_ text: String) -> Bool {
            var digits = Substring(text)
            if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
            return !digits.isEmpty && digits.allSatisfy(\.isASCIIDigitCharacter)
        }

        /// Core schema resolution of a plain scalar.
        static func coreValue(_ text: String) -> ConfigValue? {
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
                return Int(text.first == "+" ? String(text.dropFirst()) : text).map(ConfigValue.int) ?? .string(text)
            }
            if text.hasPrefix("0x"), let value = Int(text.dropFirst(2), radix: 16) { return .int(value) }
            if text.hasPrefix("0o"), let value = Int(text.dropFirst(2), radix: 8) { return .int(value) }
            if isCoreFloat(text), let value = Double(text) { return .double(value) }
            return nil
        }

        /// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
        static func isCoreFloat(_ text: String) -> Bool {
            var rest = Substring(text)
            if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
            let whole = rest.prefix { $0.isASCIIDigitCharacter }
            rest = rest.dropFirst(whole.count)
            var fraction = Substring()
            if rest.first == "." {
                rest = rest.dropFirst()
                fraction = rest.prefix { $0.isASCIIDigitCharacter }
                rest = rest.dropFirst(fraction.count)
            }
            guard !whole.isEmpty || !fraction.isEmpty else { return false }
            if rest.first == "e" || rest.first == "E" {
                rest = rest.dropFirst()
                if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
                let exponent = rest.prefix { $0.isASCIIDigitCharacter }
                guard !exponent.isEmpty else { return false }
                rest = rest.dropFirst(exponent.count)
            }
            return rest.isEmpty
        }
    }
}

extension ConfigValue {
    /// The core-schema tag name of a scalar value (`int`, `float`, `bool`, `null`, `str`).
    fileprivate var tagName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .double: "float"
        case .string: "str"
        case .array: "seq"
        case .table: "map"
        }
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

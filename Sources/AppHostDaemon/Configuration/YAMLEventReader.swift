import AppHost
import CYAML

/// libyaml's event parser over one config file's bytes: each `next()` is one event with the
/// line and column where it starts, or the parser's own error told as a `ConfigurationError`.
final class YAMLEventReader {
    /// One parse event, copied out of libyaml's buffers.
    enum Event {
        case streamStart
        case streamEnd
        case documentStart
        case documentEnd
        case alias(anchor: String)
        case scalar(String, anchor: String?, tag: String?, plain: Bool)
        case sequenceStart(anchor: String?, tag: String?)
        case sequenceEnd
        case mappingStart(anchor: String?, tag: String?)
        case mappingEnd
    }

    /// An event and where it starts, 1-based.
    struct Located {
        var event: Event
        var line: Int
        var column: Int
    }

    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let input: UnsafeMutableBufferPointer<UInt8>
    private let text: String
    private let file: String
    private var finished = false

    /// A reader of `text`, reporting errors against `file`.
    init(text: String, file: String) {
        self.text = text
        self.file = file
        input = .allocate(capacity: max(text.utf8.count, 1))
        _ = input.initialize(from: text.utf8)
        parser = .allocate(capacity: 1)
        yaml_parser_initialize(parser)
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, input.baseAddress, text.utf8.count)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        input.deallocate()
    }

    /// The next event; after `streamEnd`, `streamEnd` again.
    func next() throws(ConfigurationError) -> Located {
        if finished { return Located(event: .streamEnd, line: 1, column: 1) }
        var raw = yaml_event_t()
        guard yaml_parser_parse(parser, &raw) != 0 else { throw syntaxError() }
        defer { yaml_event_delete(&raw) }
        let event: Event
        switch raw.type {
        case YAML_STREAM_START_EVENT:
            event = .streamStart
        case YAML_STREAM_END_EVENT:
            finished = true
            event = .streamEnd
        case YAML_DOCUMENT_START_EVENT:
            event = .documentStart
        case YAML_DOCUMENT_END_EVENT:
            event = .documentEnd
        case YAML_ALIAS_EVENT:
            event = .alias(anchor: Self.string(raw.data.alias.anchor) ?? "")
        case YAML_SCALAR_EVENT:
            let scalar = raw.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            event = .scalar(
                value, anchor: Self.string(scalar.anchor), tag: Self.string(scalar.tag),
                plain: scalar.style == YAML_PLAIN_SCALAR_STYLE
            )
        case YAML_SEQUENCE_START_EVENT:
            event = .sequenceStart(anchor: Self.string(raw.data.sequence_start.anchor), tag: Self.string(raw.data.sequence_start.tag))
        case YAML_SEQUENCE_END_EVENT:
            event = .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            event = .mappingStart(anchor: Self.string(raw.data.mapping_start.anchor), tag: Self.string(raw.data.mapping_start.tag))
        case YAML_MAPPING_END_EVENT:
            event = .mappingEnd
        default:
            throw ConfigurationError(file: file, keyPath: "", message: "YAML error: unexpected parser event \(raw.type.rawValue)")
        }
        return Located(event: event, line: raw.start_mark.line + 1, column: raw.start_mark.column + 1)
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// libyaml's error as `FILE:LINE: YAML syntax error at column C: problem (context)`, with a
    /// hint when the line holds a tab.
    private func syntaxError() -> ConfigurationError {
        let state = parser.pointee
        let problem = state.problem.map { String(cString: $0) } ?? "unknown problem"
        switch state.error {
        case YAML_READER_ERROR:
            let line = text.utf8.prefix(state.problem_offset).reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            let byte = state.problem_value >= 0 ? " (character 0x\(String(state.problem_value, radix: 16)))" : ""
            return ConfigurationError(
                file: file, line: line, keyPath: "", message: "unreadable YAML: \(problem)\(byte)",
                hint: "a config file is plain UTF-8 text"
            )
        case YAML_SCANNER_ERROR, YAML_PARSER_ERROR:
            let mark = state.problem_mark
            var message = "YAML syntax error at column \(mark.column + 1): \(problem)"
            if let context = state.context {
                message += " (\(String(cString: context)) at line \(state.context_mark.line + 1))"
            }
            let lineText = text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(mark.line).first ?? ""
            let hint: String? = lineText.contains("\t") ? "YAML does not allow tabs for indentation; indent with spaces" : nil
            return ConfigurationError(file: file, line: mark.line + 1, keyPath: "", message: message, hint: hint)
        default:
            return ConfigurationError(file: file, keyPath: "", message: "YAML error: \(problem)")
        }
    }
}

/// A configuration problem, told the way an operator fixes it: file, line, key path, what is
/// wrong and what would be valid.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The config file, when the value came from one.
    public var file: String?
    /// The 1-based line of the offending key or value, when the parser knew it.
    public var line: Int?
    /// The key path, such as `services[1].settings.level`; empty for the whole file.
    public var keyPath: String
    /// What is wrong.
    public var message: String
    /// What would be valid, if there is something to suggest.
    public var hint: String?

    /// An error about `keyPath`, located in `file` at `line` when known.
    public init(file: String? = nil, line: Int? = nil, keyPath: String, message: String, hint: String? = nil) {
        self.file = file
        self.line = line
        self.keyPath = keyPath
        self.message = message
        self.hint = hint
    }

    /// `FILE:LINE: KEY: MESSAGE (HINT)`, leaving out the parts that are unknown.
    public var description: String {
        var parts: [String] = []
        switch (file, line) {
        case let (file?, line?): parts.append("\(file):\(line)")
        case let (file?, nil): parts.append(file)
        case let (nil, line?): parts.append("line \(line)")
        case (nil, nil): break
        }
        if !keyPath.isEmpty { parts.append(keyPath) }
        var text = parts.map { $0 + ": " }.joined() + message
        if let hint { text += " (\(hint))" }
        return text
    }
}

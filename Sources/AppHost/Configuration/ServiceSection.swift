/// One service's settings section, with typed, strict accessors.
///
/// Every accessor names the key path (and file and line, when known) in the error it throws, so
/// a service validates its section in its factory and the operator reads exactly what to fix.
public struct ServiceSection: Sendable, Hashable {
    /// The settings, as given.
    public let values: [String: SettingValue]
    /// The key path of this section in the file, such as `services[2].settings`.
    public let keyPath: String
    /// The file the section came from, if any.
    public let file: String?
    /// Lines of the keys below this section, by full key path.
    public let lines: [String: Int]

    /// A section with these settings.
    public init(
        _ values: [String: SettingValue] = [:],
        keyPath: String = "settings",
        file: String? = nil,
        lines: [String: Int] = [:]
    ) {
        self.values = values
        self.keyPath = keyPath
        self.file = file
        self.lines = lines
    }

    /// An empty section at key path `settings`.
    public init() {
        self.init([:], keyPath: "settings")
    }

    /// An empty section.
    public static let empty = ServiceSection()

    /// The full key path of `key` in this section.
    public func path(of key: String) -> String {
        keyPath.isEmpty ? key : "\(keyPath).\(key)"
    }

    /// An error about `key` (or the section itself when `key` is nil), located in the file.
    public func error(_ key: String?, _ message: String, hint: String? = nil) -> ConfigurationError {
        let path = key.map(path(of:)) ?? keyPath
        return ConfigurationError(file: file, line: lines[path] ?? lines[keyPath], keyPath: path, message: message, hint: hint)
    }

    /// Refuses keys outside `allowed`, naming the valid ones; call it first in a factory.
    public func requireOnlyKeys(_ allowed: some Collection<String>) throws(ConfigurationError) {
        if let first = unknownKeys(allowed).first { throw first }
    }

    /// One error for each key outside `allowed`, in file order, naming the valid ones and, for
    /// a near miss such as `levle`, the key meant: for a loader that reports every problem of
    /// a file at once.
    public func unknownKeys(_ allowed: some Collection<String>) -> [ConfigurationError] {
        var allowedSet = Set<String>(minimumCapacity: allowed.count)
        for key in allowed { allowedSet.insert(key) }
        let unknown = values.keys.filter { !allowedSet.contains($0) }
        guard !unknown.isEmpty else { return [] }
        let valid = allowedSet.sorted()
        let hint = valid.isEmpty ? "this service takes no settings" : "valid keys: \(valid.joined(separator: ", "))"
        return unknown
            .sorted { (lines[path(of: $0)] ?? 0, $0) < (lines[path(of: $1)] ?? 0, $1) }
            .map { key in
                let guess = Spelling.closest(to: key, in: valid)
                return error(key, "unknown key", hint: guess.map { "did you mean \($0)? \(hint)" } ?? hint)
            }
    }

    /// A string, or nil when the key is absent.
    public func string(_ key: String) throws(ConfigurationError) -> String? {
        switch values[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw error(key, "expected a string, found \(other.typeName)")
        }
    }

    /// One of `choices`, or nil when absent.
    public func choice(_ key: String, of choices: [String]) throws(ConfigurationError) -> String? {
        guard let value = try string(key) else { return nil }
        guard choices.contains(value) else {
            throw error(key, "\"\(value)\" is not valid", hint: "expected one of \(choices.joined(separator: ", "))")
        }
        return value
    }

    /// A boolean, or nil when absent.
    public func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        switch values[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw error(key, "expected true or false, found \(other.typeName)", hint: Self.unquoteHint(key, other, if: { Bool($0) != nil }))
        }
    }

    /// An integer within `range`, or nil when absent.
    public func int(_ key: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(ConfigurationError) -> Int? {
        let value: Int
        switch values[key] {
        case nil, .null?: return nil
        case .int(let int)?: value = int
        case let other?: throw error(key, "expected an integer, found \(other.typeName)", hint: Self.unquoteHint(key, other, if: { Int($0) != nil }))
        }
        guard range.contains(value) else {
            throw error(key, "\(value) is out of range", hint: "expected \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A number (integer or decimal), or nil when absent.
    public func double(_ key: String) throws(ConfigurationError) -> Double? {
        switch values[key] {
        case nil, .null?: return nil
        case .int(let value)?: return Double(value)
        case .double(let value)?: return value
        case let other?: throw error(key, "expected a number, found \(other.typeName)", hint: Self.unquoteHint(key, other, if: { Double($0) != nil }))
        }
    }

    /// A duration written `250ms`, `5s`, `2m` or `1h` (a bare number is seconds), or nil when absent.
    public func duration(_ key: String) throws(ConfigurationError) -> Duration? {
        switch values[key] {
        case nil, .null?: return nil
        case .int(let seconds)? where seconds >= 0 && Double(seconds) <= Duration.largestConfigSeconds:
            return .seconds(seconds)
        case .double(let seconds)? where seconds >= 0 && seconds <= Duration.largestConfigSeconds:
            return .milliseconds(Int64(seconds * 1000))
        case .int?, .double?:
            throw error(key, "expected a duration between 0 and 100 years", hint: "write it like 250ms, 5s, 2m or 1h")
        case .string(let text)?:
            guard let duration = Duration(configText: text) else {
                throw error(key, "\"\(text)\" is not a duration", hint: "write it like 250ms, 5s, 2m or 1h")
            }
            return duration
        case let other?:
            throw error(key, "expected a duration, found \(other.typeName)", hint: "write it like 250ms, 5s, 2m or 1h")
        }
    }

    /// A list of strings, or nil when absent.
    public func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        switch values[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let text) = item else {
                    throw error("\(key)[\(index)]", "expected a string, found \(item.typeName)")
                }
                result.append(text)
            }
            return result
        case let other?: throw error(key, "expected a list of strings, found \(other.typeName)")
        }
    }

    /// A nested mapping as its own section, or nil when absent.
    public func section(_ key: String) throws(ConfigurationError) -> ServiceSection? {
        switch values[key] {
        case nil, .null?: return nil
        case .table(let table)?: return ServiceSection(table, keyPath: path(of: key), file: file, lines: lines)
        case let other?: throw error(key, "expected a mapping, found \(other.typeName)")
        }
    }

    /// A list of mappings, each as its own section, or nil when absent.
    public func sections(_ key: String) throws(ConfigurationError) -> [ServiceSection]? {
        switch values[key] {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [ServiceSection] = []
            for (index, item) in items.enumerated() {
                guard case .table(let table) = item else {
                    throw error("\(key)[\(index)]", "expected a mapping, found \(item.typeName)")
                }
                result.append(ServiceSection(table, keyPath: path(of: "\(key)[\(index)]"), file: file, lines: lines))
            }
            return result
        case let other?: throw error(key, "expected a list, found \(other.typeName)")
        }
    }
}

extension Duration {
    /// About 100 years: longer is a typo, and it keeps `microseconds` and `nanoseconds` in `Int64`.
    static let largestConfigSeconds: Double = 3_200_000_000

    /// Parses `250ms`, `5s`, `1.5s`, `2m`, `1h` or a bare number of seconds.
    package init?(configText text: String) {
        let trimmed = text.trimmingSpaces
        let units: [(String, Double)] = [("ms", 0.001), ("us", 0.000_001), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(trimmed)
        var scale = 1.0
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            number = trimmed.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number.trimmingSpaces), value.isFinite, value >= 0,
            value * scale <= Duration.largestConfigSeconds
        else { return nil }
        self = .nanoseconds(Int64((value * scale * 1e9).rounded()))
    }

    /// The duration as a config file writes it: `250ms`, `5s`, `1.5s`.
    package var configText: String {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        return "\(Double(milliseconds) / 1000)s"
    }

    /// Whole microseconds, as systemd's `*_USEC=` fields want.
    package var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

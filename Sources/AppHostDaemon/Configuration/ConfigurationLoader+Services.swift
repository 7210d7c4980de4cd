import AppHost
import AppHostSystemd
import Logging

/// `services:`: each entry, its type through the registry, its settings and its name.
extension ConfigurationLoader {
    func readServices(_ root: ServiceSection, lines: [String: Int], problems: inout ConfigurationErrorCollector) -> [DaemonConfiguration.ServiceEntry] {
        let items: [SettingValue]
        switch root.values["services"] {
        case nil where root.values.keys.contains(where: { Spelling.closest(to: $0, in: Self.topLevelKeys) == "services" }):
            // A misspelt services:, already reported as an unknown key with the right spelling.
            return []
        case nil, .null?:
            problems.record(root.error("services", "no services are listed",
                                       hint: "add services: with at least one entry, such as - logger"))
            return []
        case .array(let array)?:
            items = array
        case let other?:
            problems.record(root.error("services", "expected a list of services, found \(other.typeName)",
                                       hint: "write one entry per line, such as - logger"))
            return []
        }
        if items.isEmpty {
            problems.record(root.error("services", "no services are listed", hint: "add at least one entry, such as - logger"))
        }
        // Each entry looks up its own keys' lines: grouped once, not filtered once per entry.
        var linesByEntry: [Int: [String: Int]] = [:]
        for (key, line) in lines where key.hasPrefix("services[") {
            if let index = Int(key.dropFirst("services[".count).prefix { $0 != "]" }) {
                linesByEntry[index, default: [:]][key] = line
            }
        }
        var entries: [DaemonConfiguration.ServiceEntry] = []
        var seen: [String: (path: String, line: Int?)] = [:]
        for (index, item) in items.enumerated() {
            let path = "services[\(index)]"
            let (name, entry) = serviceEntry(item, path: path, file: root.file ?? "", lines: linesByEntry[index] ?? [:], depth: 1, problems: &problems)
            guard let name else { continue }
            if let first = seen[name] {
                problems.record(ConfigurationError(
                    file: root.file, line: lines[path], keyPath: path,
                    message: "duplicate service name \"\(name)\"",
                    hint: "already used by \(first.path)\(first.line.map { " at line \($0)" } ?? ""); give each instance its own name"
                ))
                continue
            }
            seen[name] = (path, lines[path])
            if let entry { entries.append(entry) }
        }
        return entries
    }

    /// One entry of `services:`: its instance name when that is valid (so a later entry with
    /// the same name is a duplicate even when this one has other problems), and the entry when
    /// it has no problem. Every key is checked, so one entry can add several problems; a check
    /// that depends on a key with a problem (the settings on the type) is left out.
    func serviceEntry(_ item: SettingValue, path: String, file: String, lines: [String: Int], depth: Int, parentKind: String? = nil, problems: inout ConfigurationErrorCollector) -> (name: String?, entry: DaemonConfiguration.ServiceEntry?) {
        if case .table(let table) = item, let kind = Self.compositeKinds.first(where: { table[$0] != nil }) {
            return compositeEntry(table, kind: kind, path: path, file: file, lines: lines, depth: depth, parentKind: parentKind, problems: &problems)
        }
        let found = problems.count
        let line = lines[path]
        var name: String?
        var type: String?
        var isRequired = false
        var deadline: Duration?
        var launchDeadline: Duration?
        var restart = RestartPolicy.temporary
        var settingsValues: [String: SettingValue]? = [:]
        // Where the type was written: `type:`, or `name:` standing in for it.
        var typePath = path
        let settingsPath = "\(path).settings"
        switch item {
        case .string(let shorthand):
            name = shorthand
            type = shorthand
        case .table(let table):
            let entry = ServiceSection(table, keyPath: path, file: file, lines: lines)
            problems.record(entry.unknownKeys(Self.serviceKeys))
            if let parentKind, parentKind != "group", table["required"] != nil {
                problems.record(Self.requiredInChoice(entry, parentKind: parentKind))
            }
            let givenName = problems.read { () throws(ConfigurationError) in try entry.string("name") }
            let givenType = problems.read { () throws(ConfigurationError) in try entry.string("type") }
            isRequired = problems.read { () throws(ConfigurationError) in try entry.bool("required") } ?? false
            deadline = problems.read { () throws(ConfigurationError) in try self.deadline(entry, "deadline") }
            launchDeadline = problems.read { () throws(ConfigurationError) in try self.deadline(entry, "launch-deadline") }
            restart = restartPolicy(entry, problems: &problems)
            switch table["settings"] {
            case nil, .null?: break
            case .table(let settings)?: settingsValues = settings
            case let other?:
                problems.record(entry.error("settings", "expected a mapping of the service's settings, found \(other.typeName)"))
                settingsValues = nil
            }
            if table["name"] == nil, table["type"] == nil {
                problems.record(entry.error(nil, "the entry has neither name: nor type:", hint: "write at least name: with a service type from the registry"))
            }
            // A name: or type: with a problem of its own stands in for nothing.
            name = table["name"] == nil ? givenType : givenName
            type = table["type"] == nil ? givenName : givenType
            typePath = table["type"] == nil ? "\(path).name" : "\(path).type"
            if givenType?.isEmpty == true {
                problems.record(entry.error("type", "the type is empty", hint: knownTypes))
                type = nil
            }
        default:
            problems.record(ConfigurationError(
                file: file, line: line, keyPath: path, message: "expected a service name or a mapping, found \(item.typeName)",
                hint: "write - logger, or name: and type: keys"
            ))
            return (nil, nil)
        }
        let namePath = item.isTable ? "\(path).name" : path
        if let given = name, problems.check({ () throws(ConfigurationError) in try validateName(given, path: namePath, file: file, line: lines[namePath] ?? line) }) == nil {
            name = nil
            // Without type:, the bad name was the type too.
            if !typePath.hasSuffix(".type") { type = nil }
        }
        guard let type, let settingsValues else { return (name, nil) }
        let settingsLines = lines.filter { $0.key == settingsPath || $0.key.hasPrefix(settingsPath + ".") || $0.key.hasPrefix(settingsPath + "[") }
        let settings = ServiceSection(settingsValues, keyPath: settingsPath, file: file, lines: settingsLines)
        // Built once and dropped: the factory validates the settings and has no side effects.
        if case .failure(let invalid) = registry.build(type: type, configuration: settings, keyPath: typePath, line: lines[typePath] ?? lines[namePath] ?? line) {
            for var error in invalid.errors {
                if !registry.contains(type), let guess = Spelling.closest(to: type, in: registry.entriesByName.map(\.name)) {
                    error.hint = "did you mean \"\(guess)\"? " + (error.hint ?? "")
                } else if !registry.contains(type), typePath.hasSuffix(".name") {
                    error.hint = "without type:, the name is the service type; add type: with one of the \(knownTypes)"
                } else if error.hint == "this service takes no settings" {
                    error.hint = "\(type) takes no settings"
                }
                problems.record(error)
            }
        }
        guard problems.count == found, let name else { return (name, nil) }
        return (name, DaemonConfiguration.ServiceEntry(
            name: name, type: type, isRequired: isRequired, deadline: deadline,
            launchDeadline: launchDeadline, restart: restart, settings: settings, line: line
        ))
    }

    /// `required:` on a child of a first-of or a one-of: the composite is required or not.
    static func requiredInChoice(_ entry: ServiceSection, parentKind: String) -> ConfigurationError {
        entry.error("required", "a child of a \(parentKind) is not required or optional on its own", hint: "the \(parentKind) is the one service its parent sees: put required: on it")
    }

    /// Instance names show up in STATUS=, journal fields and file names: keep them tame.
    func validateName(_ name: String, path: String, file: String, line: Int?) throws(ConfigurationError) {
        let allowed = name.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "-" || scalar == "_" || scalar == "."
        }
        guard !name.isEmpty, name.count <= 64, allowed, name.first != "-", name.first != "." else {
            throw ConfigurationError(
                file: file, line: line, keyPath: path, message: "\"\(name)\" is not a valid service name",
                hint: "use 1 to 64 letters, digits, '-', '_' or '.', not starting with '-' or '.'"
            )
        }
    }

    /// The registry's types, for hints.
    var knownTypes: String {
        "known services: " + registry.entriesByName.map(\.name).joined(separator: ", ")
    }
}

extension SettingValue {
    fileprivate var isTable: Bool {
        if case .table = self { return true }
        return false
    }
}

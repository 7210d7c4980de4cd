import AppHost
import AppHostSystemd
import Logging

/// Composite entries (`first-of`, `one-of`, `group`) and a one-of's `select`.
extension ConfigurationLoader {
    /// A composite entry (`first-of:`, `one-of:` or `group:` with its children), checked as
    /// thoroughly as a service entry: every problem of it and of its children at once.
    func compositeEntry(_ table: [String: SettingValue], kind: String, path: String, file: String, lines: [String: Int], depth: Int, parentKind: String?, problems: inout ConfigurationErrorCollector) -> (name: String?, entry: DaemonConfiguration.ServiceEntry?) {
        let found = problems.count
        let entry = ServiceSection(table, keyPath: path, file: file, lines: lines)
        let childrenPath = "\(path).\(kind)"
        let others = Self.compositeKinds.filter { $0 != kind && table[$0] != nil }
        for other in others {
            problems.record(entry.error(other, "an entry is one composite: \(kind) and \(other) together", hint: "nest one inside the other, or split them into two entries"))
        }
        let ownKeys = ["type", "settings", "deadline", "launch-deadline"] + Self.restartKeys
        for key in ownKeys where table[key] != nil {
            problems.record(entry.error(key, "a \(kind) has no \(key) of its own", hint: "give each child its own \(key)"))
        }
        problems.record(entry.unknownKeys(Self.compositeKeys + ownKeys))
        if let parentKind, parentKind != "group", table["required"] != nil {
            problems.record(Self.requiredInChoice(entry, parentKind: parentKind))
        }
        let isRequired = problems.read { () throws(ConfigurationError) in try entry.bool("required") } ?? false
        var name: String?
        switch table["name"] {
        case nil:
            problems.record(entry.error(nil, "a \(kind) needs name:", hint: "its children are named after it, like notify/desktop"))
        default:
            if let given = problems.read({ () throws(ConfigurationError) in try entry.string("name") }),
               problems.check({ () throws(ConfigurationError) in try validateName(given, path: "\(path).name", file: file, line: lines["\(path).name"] ?? lines[path]) }) != nil {
                name = given
            }
        }
        if depth > ServiceComposite.maximumDepth {
            problems.record(entry.error(kind, "composites nest \(depth) deep", hint: "at most \(ServiceComposite.maximumDepth) levels"))
            return (name, nil)
        }
        var children: [DaemonConfiguration.ServiceEntry] = []
        var childNames: [String] = []
        switch table[kind] {
        case .array(let items)?:
            if items.isEmpty {
                problems.record(entry.error(kind, "a \(kind) with no children", hint: "list at least one service under it"))
            }
            var seen: [String: String] = [:]
            for (index, item) in items.enumerated() {
                let childPath = "\(childrenPath)[\(index)]"
                let (childName, child) = serviceEntry(item, path: childPath, file: file, lines: lines, depth: depth + 1, parentKind: kind, problems: &problems)
                guard let childName else { continue }
                if let first = seen[childName] {
                    problems.record(ConfigurationError(
                        file: file, line: lines[childPath], keyPath: childPath, message: "duplicate name \"\(childName)\" in this \(kind)",
                        hint: "already used by \(first); give each child its own name"
                    ))
                    continue
                }
                seen[childName] = childPath
                childNames.append(childName)
                if let child { children.append(child) }
            }
        case nil, .null?:
            problems.record(entry.error(kind, "a \(kind) with no children", hint: "list at least one service under it"))
        case let other?:
            problems.record(entry.error(kind, "expected a list of services, found \(other.typeName)", hint: "write one child per line, such as - logger"))
        }
        var compositeKind: ServiceComposite.Kind?
        switch kind {
        case "one-of":
            compositeKind = selection(entry, children: childNames, problems: &problems)
        case "first-of":
            compositeKind = .firstOf
        default:
            compositeKind = .group
        }
        if kind != "one-of", table["select"] != nil {
            problems.record(entry.error("select", "only a one-of selects a child", hint: "a \(kind) launches \(kind == "group" ? "all its children" : "the first child that launches")"))
        }
        guard problems.count == found, let name, let compositeKind else { return (name, nil) }
        return (name, DaemonConfiguration.ServiceEntry(
            name: name, type: kind, isRequired: isRequired, deadline: nil, launchDeadline: nil,
            settings: ServiceSection([:], keyPath: "\(path).settings", file: file), line: lines[path],
            composite: DaemonConfiguration.Composite(kind: compositeKind, children: children)
        ))
    }

    /// A one-of's `select:`: a child's name, or `{ environment: VARIABLE, default: child }`
    /// read from the daemon's environment now.
    func selection(_ entry: ServiceSection, children: [String], problems: inout ConfigurationErrorCollector) -> ServiceComposite.Kind? {
        let hint = "write select: with a child's name, or select: { environment: VARIABLE, default: CHILD }"
        let childList = "children: " + children.joined(separator: ", ")
        func chosen(_ name: String, because reason: String, key: String, in section: ServiceSection) -> ServiceComposite.Kind? {
            guard children.isEmpty || children.contains(name) else {
                let guess = Spelling.closest(to: name, in: children).map { "did you mean \"\($0)\"? " } ?? ""
                problems.record(section.error(key, "\(reason.isEmpty ? "" : reason + ": ")\"\(name)\" is no child of this one-of", hint: guess + childList))
                return nil
            }
            return .oneOf(chosen: name, reason: reason.isEmpty ? "select: \(name)" : reason)
        }
        switch entry.values["select"] {
        case nil, .null?:
            problems.record(entry.error(nil, "a one-of needs select:", hint: hint))
            return nil
        case .string(let name)?:
            return chosen(name, because: "", key: "select", in: entry)
        case .table(let table)?:
            let select = ServiceSection(table, keyPath: entry.keyPath + ".select", file: entry.file, lines: entry.lines)
            problems.record(select.unknownKeys(Self.selectKeys))
            let variable = problems.read { () throws(ConfigurationError) in try select.string("environment") }
            let fallback = problems.read { () throws(ConfigurationError) in try select.string("default") }
            guard let variable, !variable.isEmpty else {
                if table["environment"] == nil { problems.record(select.error(nil, "select: names no environment variable", hint: hint)) }
                return nil
            }
            if let value = environment[variable], !value.isEmpty {
                return chosen(value, because: "\(variable)=\(value)", key: "environment", in: select)
            }
            guard let fallback else {
                problems.record(select.error("environment", "\(variable) is not set and select: has no default:", hint: "set \(variable) to one of the \(childList), or add default:"))
                return nil
            }
            return chosen(fallback, because: "\(variable) not set, the default", key: "default", in: select)
        case let other?:
            problems.record(entry.error("select", "expected a child's name or a mapping, found \(other.typeName)", hint: hint))
            return nil
        }
    }
}

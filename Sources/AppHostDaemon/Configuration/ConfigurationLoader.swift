import AppHost
import AppHostSystemd
import Logging

/// Reads and validates the daemon's YAML config file, all or nothing.
///
/// Every problem comes out as a `ConfigurationError` naming the file, the line, the key path
/// and what would be valid; the loader reads on past each one, so a file's problems come out
/// together as `InvalidConfiguration`, and the daemon can exit 78 at start or keep the old config
/// on reload. A file that cannot be read, is not UTF-8, is not YAML or has no mapping at the top
/// stops at that one problem. Validation builds each service once through its registry factory (factories have no
/// side effects), so a config that loads also launches without settings errors.
package struct ConfigurationLoader: Sendable {
    /// Largest config file accepted, in bytes; anything bigger is refused unread.
    static let sizeLimit = 1 << 20

    /// Keys allowed at the top of the file.
    static let topLevelKeys = ["host", "services"]
    /// Keys allowed under `host:`.
    static let hostKeys = ["hook-deadline", "launch-deadline", "terminate-deadline", "stall-limit", "state-directory", "log-level", "memory-pressure", "metrics"]
    /// Keys allowed under `host.metrics:`.
    static let metricsKeys = ["textfile", "daemon"]
    /// Keys allowed under `host.memory-pressure:`.
    static let memoryPressureKeys = ["enabled", "warning-stall", "critical-stall", "window"]
    /// Keys allowed in one `services:` entry.
    static let serviceKeys = ["name", "type", "required", "deadline", "launch-deadline", "settings"] + compositeKinds
    /// The keys that make an entry a composite, each with its list of children.
    static let compositeKinds = ["first-of", "one-of", "group"]
    /// Keys allowed in a composite entry.
    static let compositeKeys = ["name", "required", "select"] + compositeKinds
    /// Longest hook or launch deadline accepted; longer is almost surely a typo (`5h` for `5s`).
    static let longestDeadline: Duration = .seconds(24 * 3600)

    /// The service types the file may name.
    let registry: ServiceRegistry
    /// The environment used to resolve the default state directory.
    let environment: [String: String]
    /// The default state directory's last component (the daemon's name).
    let stateDirectoryName: String

    /// A loader that validates services against `registry`.
    package init(registry: ServiceRegistry, environment: [String: String] = ProcessEnvironment.current, stateDirectoryName: String = DaemonIdentity.apphostd.stateDirectoryName) {
        self.registry = registry
        self.environment = environment
        self.stateDirectoryName = stateDirectoryName
    }

    /// Parses and fully validates `text`, reporting errors against `file`.
    package func load(text: String, file: String) throws(InvalidConfiguration) -> DaemonConfiguration {
        let document = try ConfigurationErrorCollector.alone { () throws(ConfigurationError) in try Self.parse(text: text, file: file) }
        var problems = ConfigurationErrorCollector()
        guard case .table(let topLevel) = document.root else {
            throw InvalidConfiguration(ConfigurationError(
                file: file, line: document.lines[""], keyPath: "",
                message: "expected a mapping with host: and services: at the top, found \(document.root.typeName)",
                hint: "start from the documented config/apphostd.yaml"
            ))
        }
        let root = ServiceConfiguration(topLevel, keyPath: "", file: file, lines: document.lines)
        problems.record(root.unknownKeys(Self.topLevelKeys))

        var configuration = DaemonConfiguration(file: file, stateDirectory: "", services: [])
        readHost(root, into: &configuration, problems: &problems)
        configuration.services = readServices(root, lines: document.lines, problems: &problems)
        if let errors = problems.errors { throw errors }
        return configuration
    }

    /// The YAML document in `text`, or the first reason there is none.
    private static func parse(text: String, file: String) throws(ConfigurationError) -> YAMLDocument {
        let size = text.utf8.count
        if size > Self.sizeLimit {
            throw ConfigurationError(
                file: file, keyPath: "", message: "the file is too large (\(size) bytes; the limit is 1 MiB)",
                hint: "a config file is a few kilobytes; is this the right file?"
            )
        }
        if text.allSatisfy(\.isWhitespace) {
            throw ConfigurationError(
                file: file, keyPath: "", message: text.isEmpty ? "the file is empty" : "the file has no settings, only whitespace",
                hint: "start from the documented config/apphostd.yaml"
            )
        }
        return try YAMLDocument.parse(text, file: file)
    }

    // MARK: host

    private func readHost(_ root: ServiceConfiguration, into configuration: inout DaemonConfiguration, problems: inout ConfigurationErrorCollector) {
        let empty = ServiceConfiguration([:], keyPath: "host", file: root.file, lines: root.lines)
        let host = problems.read { () throws(ConfigurationError) in try root.section("host") } ?? empty
        problems.record(host.unknownKeys(Self.hostKeys))
        if let value = problems.read({ () throws(ConfigurationError) in try deadline(host, "hook-deadline") }) {
            configuration.hookDeadline = value
        }
        if let value = problems.read({ () throws(ConfigurationError) in try deadline(host, "launch-deadline") }) {
            configuration.launchDeadline = value
        }
        if let value = problems.read({ () throws(ConfigurationError) in try deadline(host, "terminate-deadline") }) {
            configuration.terminateDeadline = value
        }
        if let value = problems.read({ () throws(ConfigurationError) in try deadline(host, "stall-limit") }) {
            configuration.stallLimit = value
        }
        configuration.stateDirectory = problems.check { () throws(ConfigurationError) in try stateDirectory(host) } ?? ""
        let levels = Logger.Level.allCases.map(\.rawValue)
        if let level = problems.read({ () throws(ConfigurationError) in try host.choice("log-level", of: levels) }) {
            configuration.logLevel = Logger.Level(rawValue: level) ?? .info
        }
        if let pressure = problems.read({ () throws(ConfigurationError) in try host.section("memory-pressure") }) {
            configuration.memoryPressure = memoryPressure(pressure, problems: &problems)
        }
        if let metrics = problems.read({ () throws(ConfigurationError) in try host.section("metrics") }) {
            configuration.metrics = self.metrics(metrics, problems: &problems)
        }
    }

    private func metrics(_ section: ServiceConfiguration, problems: inout ConfigurationErrorCollector) -> DaemonConfiguration.Metrics {
        problems.record(section.unknownKeys(Self.metricsKeys))
        var result = DaemonConfiguration.Metrics()
        if let path = problems.read({ () throws(ConfigurationError) in try section.string("textfile") }) {
            let name = path.split(separator: "/").last.map(String.init) ?? ""
            if !path.hasPrefix("/") {
                problems.record(section.error("textfile", "\"\(path)\" is not an absolute path", hint: "write it like /run/apphostd-metrics/apphostd.prom"))
            } else if !name.hasSuffix(".prom") || name == ".prom" || path.hasSuffix("/") {
                problems.record(section.error("textfile", "\"\(path)\" does not name a file ending in .prom", hint: "node_exporter's textfile collector reads *.prom files only"))
            } else if path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                problems.record(section.error("textfile", "the path holds a control character", hint: "write it like /run/apphostd-metrics/apphostd.prom"))
            } else {
                result.textfile = path
            }
        }
        if let daemon = problems.read({ () throws(ConfigurationError) in try section.string("daemon") }) {
            if daemon.isEmpty || daemon.count > 128 || daemon.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                problems.record(section.error("daemon", "expected a label value of 1 to 128 characters without control characters", hint: "write it like kiosk-3"))
            } else {
                result.daemon = daemon
            }
        }
        return result
    }

    private func memoryPressure(_ section: ServiceConfiguration, problems: inout ConfigurationErrorCollector) -> DaemonConfiguration.MemoryPressure {
        problems.record(section.unknownKeys(Self.memoryPressureKeys))
        var result = DaemonConfiguration.MemoryPressure()
        if let enabled = problems.read({ () throws(ConfigurationError) in try section.bool("enabled") }) {
            result.enabled = enabled
        }
        // The kernel takes PSI windows of 500ms to 10s, and a stall no longer than its window.
        let windows = Duration.milliseconds(500) ... Duration.seconds(10)
        let windowHint = "expected 500ms to 10s (the kernel's PSI limits)"
        let windowFound = problems.count
        if let window = problems.read({ () throws(ConfigurationError) in try duration(section, "window", in: windows, hint: windowHint) }) {
            result.window = window
        }
        // Stalls are measured against the window: with a bad window there is none to measure against.
        guard problems.count == windowFound else { return result }
        let stalls = Duration.milliseconds(1) ... result.window
        let stallHint = "expected more than 0 and at most window (\(result.window.configText))"
        if let stall = problems.read({ () throws(ConfigurationError) in try duration(section, "warning-stall", in: stalls, hint: stallHint) }) {
            result.warningStall = stall
        }
        if let stall = problems.read({ () throws(ConfigurationError) in try duration(section, "critical-stall", in: stalls, hint: stallHint) }) {
            result.criticalStall = stall
        }
        if section.values["warning-stall"] == nil, result.warningStall > result.window {
            problems.record(section.error("window", "window \(result.window.configText) is shorter than warning-stall's default (\(result.warningStall.configText))", hint: "set warning-stall too"))
        }
        if section.values["critical-stall"] == nil, result.criticalStall > result.window {
            problems.record(section.error("window", "window \(result.window.configText) is shorter than critical-stall's default (\(result.criticalStall.configText))", hint: "set critical-stall too"))
        }
        return result
    }

    /// `host.state-directory`, else `$STATE_DIRECTORY` (first of its colon list), else
    /// `$XDG_STATE_HOME/apphostd`, else `$HOME/.local/state/apphostd`, else `/var/lib/apphostd`.
    private func stateDirectory(_ host: ServiceConfiguration) throws(ConfigurationError) -> String {
        if let path = try host.string("state-directory") {
            guard path.hasPrefix("/") else {
                throw host.error("state-directory", "\"\(path)\" is not an absolute path", hint: "write it like /var/lib/apphostd")
            }
            return path
        }
        return Self.defaultStateDirectory(environment: environment, name: stateDirectoryName)
    }

    /// The state directory when the config names none: `$STATE_DIRECTORY` (first of its colon
    /// list), else `$XDG_STATE_HOME/<name>`, else `$HOME/.local/state/<name>`, else
    /// `/var/lib/<name>`.
    static func defaultStateDirectory(environment: [String: String], name: String = DaemonIdentity.apphostd.stateDirectoryName) -> String {
        if let systemd = systemdStateDirectory(environment: environment) { return systemd }
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return xdg + "/" + name
        }
        if let home = environment["HOME"], home.hasPrefix("/"), home != "/" {
            return home + "/.local/state/" + name
        }
        return "/var/lib/" + name
    }

    /// The first absolute entry of `$STATE_DIRECTORY`'s colon list (the unit's `StateDirectory=`),
    /// if set.
    static func systemdStateDirectory(environment: [String: String]) -> String? {
        guard let first = environment["STATE_DIRECTORY"]?.split(separator: ":").first, first.hasPrefix("/") else { return nil }
        return String(first)
    }

    // MARK: services

    private func readServices(_ root: ServiceConfiguration, lines: [String: Int], problems: inout ConfigurationErrorCollector) -> [DaemonConfiguration.ServiceEntry] {
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
    private func serviceEntry(_ item: SettingValue, path: String, file: String, lines: [String: Int], depth: Int, parentKind: String? = nil, problems: inout ConfigurationErrorCollector) -> (name: String?, entry: DaemonConfiguration.ServiceEntry?) {
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
        var settingsValues: [String: SettingValue]? = [:]
        // Where the type was written: `type:`, or `name:` standing in for it.
        var typePath = path
        let settingsPath = "\(path).settings"
        switch item {
        case .string(let shorthand):
            name = shorthand
            type = shorthand
        case .table(let table):
            let entry = ServiceConfiguration(table, keyPath: path, file: file, lines: lines)
            problems.record(entry.unknownKeys(Self.serviceKeys))
            if let parentKind, parentKind != "group", table["required"] != nil {
                problems.record(Self.requiredInChoice(entry, parentKind: parentKind))
            }
            let givenName = problems.read { () throws(ConfigurationError) in try entry.string("name") }
            let givenType = problems.read { () throws(ConfigurationError) in try entry.string("type") }
            isRequired = problems.read { () throws(ConfigurationError) in try entry.bool("required") } ?? false
            deadline = problems.read { () throws(ConfigurationError) in try self.deadline(entry, "deadline") }
            launchDeadline = problems.read { () throws(ConfigurationError) in try self.deadline(entry, "launch-deadline") }
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
        let settings = ServiceConfiguration(settingsValues, keyPath: settingsPath, file: file, lines: settingsLines)
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
            launchDeadline: launchDeadline, settings: settings, line: line
        ))
    }

    /// `required:` on a child of a first-of or a one-of: the composite is required or not.
    static func requiredInChoice(_ entry: ServiceConfiguration, parentKind: String) -> ConfigurationError {
        entry.error("required", "a child of a \(parentKind) is not required or optional on its own", hint: "the \(parentKind) is the one service its parent sees: put required: on it")
    }

    /// A composite entry (`first-of:`, `one-of:` or `group:` with its children), checked as
    /// thoroughly as a service entry: every problem of it and of its children at once.
    private func compositeEntry(_ table: [String: SettingValue], kind: String, path: String, file: String, lines: [String: Int], depth: Int, parentKind: String?, problems: inout ConfigurationErrorCollector) -> (name: String?, entry: DaemonConfiguration.ServiceEntry?) {
        let found = problems.count
        let entry = ServiceConfiguration(table, keyPath: path, file: file, lines: lines)
        let childrenPath = "\(path).\(kind)"
        let others = Self.compositeKinds.filter { $0 != kind && table[$0] != nil }
        for other in others {
            problems.record(entry.error(other, "an entry is one composite: \(kind) and \(other) together", hint: "nest one inside the other, or split them into two entries"))
        }
        for key in ["type", "settings", "deadline", "launch-deadline"] where table[key] != nil {
            problems.record(entry.error(key, "a \(kind) has no \(key) of its own", hint: "give each child its own \(key)"))
        }
        problems.record(entry.unknownKeys(Self.compositeKeys + ["type", "settings", "deadline", "launch-deadline"]))
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
            settings: ServiceConfiguration([:], keyPath: "\(path).settings", file: file), line: lines[path],
            composite: DaemonConfiguration.Composite(kind: compositeKind, children: children)
        ))
    }

    /// A one-of's `select:`: a child's name, or `{ environment: VARIABLE, default: child }`
    /// read from the daemon's environment now.
    private func selection(_ entry: ServiceConfiguration, children: [String], problems: inout ConfigurationErrorCollector) -> ServiceComposite.Kind? {
        let hint = "write select: with a child's name, or select: { environment: VARIABLE, default: CHILD }"
        let childList = "children: " + children.joined(separator: ", ")
        func chosen(_ name: String, because reason: String, key: String, in section: ServiceConfiguration) -> ServiceComposite.Kind? {
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
            let select = ServiceConfiguration(table, keyPath: entry.keyPath + ".select", file: entry.file, lines: entry.lines)
            problems.record(select.unknownKeys(["environment", "default"]))
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

    private var knownTypes: String {
        "known services: " + registry.entriesByName.map(\.name).joined(separator: ", ")
    }

    /// Instance names show up in STATUS=, journal fields and file names: keep them tame.
    private func validateName(_ name: String, path: String, file: String, line: Int?) throws(ConfigurationError) {
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

    // MARK: durations

    /// A deadline: more than 0 and at most a day.
    private func deadline(_ section: ServiceConfiguration, _ key: String) throws(ConfigurationError) -> Duration? {
        try duration(section, key, in: .milliseconds(1) ... Self.longestDeadline, hint: "expected more than 0 and at most 24h, like 250ms, 5s, 2m or 1h")
    }

    /// A duration within `range`, refusing negative values with their own message.
    private func duration(_ section: ServiceConfiguration, _ key: String, in range: ClosedRange<Duration>, hint: String) throws(ConfigurationError) -> Duration? {
        switch section.values[key] {
        case .int(let value)? where value < 0:
            throw section.error(key, "\(value) is negative", hint: hint)
        case .double(let value)? where value < 0 || !value.isFinite:
            throw section.error(key, "\(value) is not a usable duration", hint: hint)
        case .string(let text)? where text.trimmingSpaces.hasPrefix("-"):
            throw section.error(key, "\"\(text)\" is negative", hint: hint)
        case .string(let text)? where Self.isHugeDuration(text):
            throw section.error(key, "\(text) is out of range", hint: hint)
        case .double(let value)? where value > 1e9:
            throw section.error(key, "\(value) seconds is out of range", hint: hint)
        default:
            break
        }
        guard let value = try section.duration(key) else { return nil }
        guard range.contains(value) else {
            let shown = section.values[key].map { value in
                if case .string(let text) = value { return text }
                return value.description + "s"
            } ?? value.configText
            throw section.error(key, "\(shown) is out of range", hint: hint)
        }
        return value
    }
}

extension ConfigurationLoader {
    /// Whether `text` parses as a duration too long to hold (Duration(configText:) would trap).
    static func isHugeDuration(_ text: String) -> Bool {
        var number = Substring(text.trimmingSpaces)
        var scale = 1.0
        for (suffix, factor) in [("ms", 0.001), ("us", 0.000_001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)] where number.hasSuffix(suffix) {
            number = number.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number.trimmingSpaces) else { return false }
        return !value.isFinite || value * scale > 1e9
    }
}

extension SettingValue {
    fileprivate var isTable: Bool {
        if case .table = self { return true }
        return false
    }
}

import AppHost
import AppHostSystemd
import Logging

/// `host:`: deadlines, the state directory, the log level, memory pressure, metrics and logind.
extension ConfigurationLoader {
    func readHost(_ root: ServiceSection, into configuration: inout DaemonConfiguration, problems: inout ConfigurationErrorCollector) {
        let empty = ServiceSection([:], keyPath: "host", file: root.file, lines: root.lines)
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
        if let logind = problems.read({ () throws(ConfigurationError) in try host.bool("logind") }) {
            configuration.followsLogind = logind
        }
        if let timeChanges = problems.read({ () throws(ConfigurationError) in try host.bool("time-changes") }) {
            configuration.followsTimeChanges = timeChanges
        }
        if let network = networkPathSource(host, problems: &problems) {
            configuration.networkPathSource = network
        }
        if let power = problems.read({ () throws(ConfigurationError) in try host.bool("power") }) {
            configuration.followsPowerState = power
        }
        // A session id may be written bare (`logind-session: 3`): YAML makes that an integer.
        let sessionText: String? = if case .int(let id)? = host.values["logind-session"], id >= 0 {
            String(id)
        } else {
            problems.read { () throws(ConfigurationError) in try host.string("logind-session") }
        }
        if let text = sessionText {
            if let session = LogindEdge.WatchedSession(text) {
                configuration.logindSession = session
            } else {
                problems.record(host.error(
                    "logind-session", "\"\(text)\" names no session",
                    hint: "auto (the unit's user's display session, or seat0's active one), user:NAME, or a session id such as 3 or c1 (loginctl list-sessions)"
                ))
            }
        }
    }

    /// `host.network`: `auto`, `networkd`, `networkmanager` or `false`; nil when absent or
    /// refused (the refusal recorded). `.some(nil)`: not followed.
    func networkPathSource(_ host: ServiceSection, problems: inout ConfigurationErrorCollector) -> NetworkPathSource?? {
        let hint = "write auto (NetworkManager, else systemd-networkd), networkd, networkmanager, or false (not followed)"
        switch host.values["network"] {
        case nil, .null?: return nil
        case .bool(false)?: return .some(nil)
        case .bool(true)?: problems.record(host.error("network", "true names no source of the network path", hint: hint))
        case .string(let text)?:
            if let source = NetworkPathSource(rawValue: text) { return source }
            problems.record(host.error("network", "\"\(text)\" names no source of the network path", hint: hint))
        case let other?:
            problems.record(host.error("network", "expected auto, networkd, networkmanager or false, found \(other.typeName)", hint: hint))
        }
        return nil
    }

    func metrics(_ section: ServiceSection, problems: inout ConfigurationErrorCollector) -> DaemonConfiguration.Metrics {
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

    func memoryPressure(_ section: ServiceSection, problems: inout ConfigurationErrorCollector) -> DaemonConfiguration.MemoryPressure {
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
    func stateDirectory(_ host: ServiceSection) throws(ConfigurationError) -> String {
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
}

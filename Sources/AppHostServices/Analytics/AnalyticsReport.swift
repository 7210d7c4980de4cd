import AppHost
import AppHostSupport

/// Usage analytics totals, as `apphostd analytics` prints them and `summary.json` stores them.
public struct AnalyticsReport: Sendable, Codable, Hashable {
    /// Memory warnings by level.
    public struct MemoryWarnings: Sendable, Codable, Hashable {
        /// Warnings of level `warning`.
        public var warning = 0
        /// Warnings of level `critical`.
        public var critical = 0
        /// Both levels.
        public var total: Int { warning + critical }
    }

    /// Launches counted.
    public var launches = 0
    /// Launches that were first launches of the installation.
    public var firstLaunches = 0
    /// Launches whose previous run ended cleanly.
    public var cleanPreviousExits = 0
    /// Launches whose previous run ended uncleanly (crash, SIGKILL, power loss).
    public var uncleanPreviousExits = 0
    /// How the previous runs ended, by `ExitCause.description` (`clean`, `signal KILL`,
    /// `watchdog`), counted at each launch that could tell.
    public var exitsByCause: [String: Int] = [:]
    /// Clean terminations analytics saw itself.
    public var terminations = 0
    /// Seconds spent active, up to the last flush.
    public var foregroundSeconds = 0.0
    /// Seconds spent in the background, up to the last flush.
    public var backgroundSeconds = 0.0
    /// Moves into the background.
    public var backgroundEntries = 0
    /// Returns to the foreground.
    public var foregroundEntries = 0
    /// Memory warnings by level.
    public var memoryWarnings = MemoryWarnings()
    /// Configuration reloads applied.
    public var reloads = 0
    /// Times the session locked.
    public var sessionLocks = 0
    /// Restarts under a service's `restart:` policy, by its instance name.
    public var restartsByService: [String: Int] = [:]
    /// Times the machine slept while the daemon ran (logind's sleep).
    public var sleeps = 0
    /// Seconds the machine spent asleep in those sleeps.
    public var sleepSeconds = 0.0
    /// Times the screen of the logind session the daemon follows locked (each also locked the
    /// session, unless it was locked already: `sessionLocks`).
    public var screenLocks = 0
    /// Significant time changes by cause (`clock`, `timezone`, `midnight`, `daylight-saving`):
    /// a change with two causes counts once for each.
    public var timeChangesByCause: [String: Int] = [:]
    /// Seconds the network path was unavailable while the daemon ran (unknown is not
    /// offline), up to the last flush.
    public var offlineSeconds = 0.0
    /// Seconds in low power mode (power-profiles-daemon's power-saver), up to the last flush.
    public var lowPowerSeconds = 0.0
    /// Seconds on battery (UPower), up to the last flush.
    public var onBatterySeconds = 0.0
    /// When the first counted event happened.
    public var firstEvent: UnixTime?
    /// When the last counted event happened.
    public var lastEvent: UnixTime?
    /// The sequence number of the last event folded in; events in the log at or below it are
    /// already counted.
    public var lastSequence: UInt64 = 0

    /// An empty report.
    public init() {}

    /// Background and foreground moves together.
    public var transitions: Int { backgroundEntries + foregroundEntries }

    /// The directory analytics keeps its files in, under a state directory.
    public static func directory(stateDirectory: String) -> String {
        stateDirectory + "/analytics"
    }

    /// Reads the report from `<stateDirectory>/analytics` without changing anything there: the
    /// summary plus every whole record of the event log (a torn tail is ignored). A missing
    /// directory is an empty report.
    public static func load(stateDirectory: String) throws -> AnalyticsReport {
        let directory = directory(stateDirectory: stateDirectory)
        var report = try loadSummary(directory: directory)
        let scan = AnalyticsLog.scan(try AtomicFile.read(directory + "/" + AnalyticsStore.logName) ?? [])
        report.fold(scan.events)
        return report
    }

    package static func loadSummary(directory: String) throws -> AnalyticsReport {
        let path = directory + "/" + AnalyticsStore.summaryName
        guard let bytes = try AtomicFile.read(path) else { return AnalyticsReport() }
        do {
            return try AnalyticsReport(json: JSONValue(parsing: bytes))
        } catch {
            throw AnalyticsStore.Failure(path: path, reason: "the summary is unreadable: \(error)")
        }
    }

    /// Adds events not yet counted.
    package mutating func fold(_ events: [AnalyticsEvent]) {
        for event in events where event.seq > lastSequence {
            apply(event)
        }
    }

    mutating func apply(_ event: AnalyticsEvent) {
        // Whole seconds: the report's JSON keeps dates in ISO 8601 and must read back equal.
        let date = UnixTime(secondsSince1970: event.at.rounded(.down))
        if firstEvent == nil { firstEvent = date }
        lastEvent = date
        lastSequence = max(lastSequence, event.seq)
        switch event.kind {
        case .launch:
            launches += 1
            if event.first == true { firstLaunches += 1 }
            switch event.previousExit {
            case LaunchOptions.PreviousExit.clean.rawValue: cleanPreviousExits += 1
            case LaunchOptions.PreviousExit.unclean.rawValue: uncleanPreviousExits += 1
            default: break
            }
            if let cause = event.exitCause { exitsByCause[cause, default: 0] += 1 }
        case .background: backgroundEntries += 1
        case .foreground: foregroundEntries += 1
        case .foregroundTime: foregroundSeconds += event.seconds ?? 0
        case .backgroundTime: backgroundSeconds += event.seconds ?? 0
        case .memoryWarning:
            if event.level == MemoryWarningLevel.critical.rawValue { memoryWarnings.critical += 1 } else { memoryWarnings.warning += 1 }
        case .reload: reloads += 1
        case .sessionLock: sessionLocks += 1
        case .terminate: terminations += 1
        case .restart:
            if let service = event.service { restartsByService[service, default: 0] += 1 }
        case .sleep:
            sleeps += 1
            sleepSeconds += event.seconds ?? 0
        case .screenLock: screenLocks += 1
        case .timeChange:
            for cause in (event.cause ?? "").split(separator: ",") { timeChangesByCause[String(cause), default: 0] += 1 }
        case .offlineTime: offlineSeconds += event.seconds ?? 0
        case .lowPowerTime: lowPowerSeconds += event.seconds ?? 0
        case .batteryTime: onBatterySeconds += event.seconds ?? 0
        }
    }

    // MARK: Rendering

    /// A table for people.
    public func renderTable() -> String {
        let rows: [(String, String)] = [
            ("launches", "\(launches)"),
            ("  first launches", "\(firstLaunches)"),
            ("  after a clean exit", "\(cleanPreviousExits)"),
            ("  after an unclean exit", "\(uncleanPreviousExits)"),
            ("exits by cause", Self.format(counts: exitsByCause)),
            ("clean terminations", "\(terminations)"),
            ("foreground time", Self.format(seconds: foregroundSeconds)),
            ("background time", Self.format(seconds: backgroundSeconds)),
            ("transitions", "\(transitions) (\(backgroundEntries) to background, \(foregroundEntries) to foreground)"),
            ("memory warnings", "\(memoryWarnings.total) (\(memoryWarnings.warning) warning, \(memoryWarnings.critical) critical)"),
            ("reloads", "\(reloads)"),
            ("session locks", "\(sessionLocks)"),
            ("restarts by service", Self.format(counts: restartsByService)),
            ("sleeps", sleeps == 0 ? "0" : "\(sleeps) (\(Self.format(seconds: sleepSeconds)) asleep)"),
            ("screen locks", "\(screenLocks)"),
            ("time changes by cause", Self.format(counts: timeChangesByCause)),
            ("time offline", Self.format(seconds: offlineSeconds)),
            ("time in low power mode", Self.format(seconds: lowPowerSeconds)),
            ("time on battery", Self.format(seconds: onBatterySeconds)),
            ("first event", firstEvent.map(Self.format(date:)) ?? "-"),
            ("last event", lastEvent.map(Self.format(date:)) ?? "-"),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0 + String(repeating: " ", count: width + 2 - $0.0.count) + $0.1 }.joined(separator: "\n") + "\n"
    }

    /// JSON for scripts: every field plus `transitions`, dates in ISO 8601, keys sorted.
    public func renderJSON() -> String {
        var members = json
        if case .object(var table) = members {
            table["transitions"] = .number(Double(transitions))
            members = .object(table)
        }
        return members.rendered(pretty: true) + "\n"
    }

    /// The report as `summary.json` keeps it.
    package var json: JSONValue {
        .object([
            "launches": .number(Double(launches)),
            "firstLaunches": .number(Double(firstLaunches)),
            "cleanPreviousExits": .number(Double(cleanPreviousExits)),
            "uncleanPreviousExits": .number(Double(uncleanPreviousExits)),
            "exitsByCause": .object(exitsByCause.mapValues { .number(Double($0)) }),
            "terminations": .number(Double(terminations)),
            "foregroundSeconds": .number(foregroundSeconds),
            "backgroundSeconds": .number(backgroundSeconds),
            "backgroundEntries": .number(Double(backgroundEntries)),
            "foregroundEntries": .number(Double(foregroundEntries)),
            "memoryWarnings": .object([
                "warning": .number(Double(memoryWarnings.warning)),
                "critical": .number(Double(memoryWarnings.critical)),
            ]),
            "reloads": .number(Double(reloads)),
            "sessionLocks": .number(Double(sessionLocks)),
            "restartsByService": .object(restartsByService.mapValues { .number(Double($0)) }),
            "sleeps": .number(Double(sleeps)),
            "sleepSeconds": .number(sleepSeconds),
            "screenLocks": .number(Double(screenLocks)),
            "timeChangesByCause": .object(timeChangesByCause.mapValues { .number(Double($0)) }),
            "offlineSeconds": .number(offlineSeconds),
            "lowPowerSeconds": .number(lowPowerSeconds),
            "onBatterySeconds": .number(onBatterySeconds),
            "firstEvent": firstEvent.map { .string($0.iso8601) },
            "lastEvent": lastEvent.map { .string($0.iso8601) },
            "lastSequence": .number(Double(lastSequence)),
        ])
    }

    /// The report `summary.json` holds; a missing field counts as zero, a field of the wrong
    /// type is an error.
    package init(json: JSONValue) throws(JSONValue.FormatError) {
        guard case .object = json else { throw JSONValue.FormatError("the summary is not a JSON object") }
        func count(_ value: JSONValue?, _ key: String) throws(JSONValue.FormatError) -> Int? {
            guard let value else { return nil }
            guard let count = value.integer, count >= 0 else { throw JSONValue.FormatError("\"\(key)\" is not a count") }
            return count
        }
        func seconds(_ key: String) throws(JSONValue.FormatError) -> Double? {
            guard let value = json[key] else { return nil }
            guard let seconds = value.number else { throw JSONValue.FormatError("\"\(key)\" is not a number") }
            return seconds
        }
        func counts(_ key: String) throws(JSONValue.FormatError) -> [String: Int] {
            guard let value = json[key] else { return [:] }
            guard case .object(let members) = value else { throw JSONValue.FormatError("\"\(key)\" is not an object") }
            var counts: [String: Int] = [:]
            for (name, value) in members {
                counts[name] = try count(value, "\(key).\(name)")
            }
            return counts
        }
        func date(_ key: String) throws(JSONValue.FormatError) -> UnixTime? {
            guard let value = json[key], value != .null else { return nil }
            guard let date = value.string.flatMap(UnixTime.init(iso8601:)) else {
                throw JSONValue.FormatError("\"\(key)\" is not a UTC timestamp like 2026-11-24T16:20:05Z")
            }
            return date
        }
        self.init()
        launches = try count(json["launches"], "launches") ?? 0
        firstLaunches = try count(json["firstLaunches"], "firstLaunches") ?? 0
        cleanPreviousExits = try count(json["cleanPreviousExits"], "cleanPreviousExits") ?? 0
        uncleanPreviousExits = try count(json["uncleanPreviousExits"], "uncleanPreviousExits") ?? 0
        exitsByCause = try counts("exitsByCause")
        terminations = try count(json["terminations"], "terminations") ?? 0
        foregroundSeconds = try seconds("foregroundSeconds") ?? 0
        backgroundSeconds = try seconds("backgroundSeconds") ?? 0
        backgroundEntries = try count(json["backgroundEntries"], "backgroundEntries") ?? 0
        foregroundEntries = try count(json["foregroundEntries"], "foregroundEntries") ?? 0
        if let warnings = json["memoryWarnings"] {
            memoryWarnings.warning = try count(warnings["warning"], "memoryWarnings.warning") ?? 0
            memoryWarnings.critical = try count(warnings["critical"], "memoryWarnings.critical") ?? 0
        }
        reloads = try count(json["reloads"], "reloads") ?? 0
        sessionLocks = try count(json["sessionLocks"], "sessionLocks") ?? 0
        restartsByService = try counts("restartsByService")
        sleeps = try count(json["sleeps"], "sleeps") ?? 0
        sleepSeconds = try seconds("sleepSeconds") ?? 0
        screenLocks = try count(json["screenLocks"], "screenLocks") ?? 0
        timeChangesByCause = try counts("timeChangesByCause")
        offlineSeconds = try seconds("offlineSeconds") ?? 0
        lowPowerSeconds = try seconds("lowPowerSeconds") ?? 0
        onBatterySeconds = try seconds("onBatterySeconds") ?? 0
        firstEvent = try date("firstEvent")
        lastEvent = try date("lastEvent")
        lastSequence = UInt64(try count(json["lastSequence"], "lastSequence") ?? 0)
    }

    static func format(seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let (hours, minutes, rest) = (total / 3600, total % 3600 / 60, total % 60)
        if hours > 0 { return "\(hours)h \(minutes)m \(rest)s" }
        if minutes > 0 { return "\(minutes)m \(rest)s" }
        return seconds < 10 ? seconds.decimalText(digits: 1) + "s" : "\(rest)s"
    }

    /// `signal KILL 2, watchdog 1`: the most first, then by name; `-` when there are none.
    static func format(counts: [String: Int]) -> String {
        guard !counts.isEmpty else { return "-" }
        return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }

    static func format(date: UnixTime) -> String {
        date.iso8601
    }
}

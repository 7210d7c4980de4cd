import AppHost

/// The settings section, checked strictly.
extension AnalyticsService {
    /// Validates a settings section strictly.
    public static func parse(_ configuration: ServiceSection) throws(ConfigurationError) -> Settings {
        try configuration.requireOnlyKeys(Self.settingKeys)
        let interval = try configuration.duration("flush-interval") ?? .seconds(60)
        guard interval >= .milliseconds(10) else {
            throw configuration.error("flush-interval", "\(interval.configText) is too short", hint: "at least 10ms; 60s is a good default")
        }
        let compactAfter: Int
        switch configuration.values["compact-after"] {
        case nil, .null?: compactAfter = 64 * 1024
        case .int(let bytes)? where bytes > 0: compactAfter = bytes
        case .string(let text)?:
            guard let bytes = parseSize(text) else {
                throw configuration.error("compact-after", "\"\(text)\" is not a size", hint: "write it like 65536, 64KiB or 1MiB")
            }
            compactAfter = bytes
        case let other?:
            throw configuration.error("compact-after", "expected a size, found \(other.description)", hint: "write it like 65536, 64KiB or 1MiB")
        }
        let lowPower = try configuration.duration("low-power-flush-interval") ?? interval * 4
        guard lowPower >= .milliseconds(10) else {
            throw configuration.error("low-power-flush-interval", "\(lowPower.configText) is too short", hint: "at least 10ms; by default four times flush-interval")
        }
        return Settings(flushInterval: interval, compactAfter: compactAfter, lowPowerFlushInterval: lowPower)
    }

    /// `4096`, `512B`, `64KiB`, `64K`, `1MiB`, `1M`, `1GiB`.
    static func parseSize(_ text: String) -> Int? {
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("B", 1)]
        var number = Substring(text.trimmingSpaces)
        var scale = 1
        for (suffix, factor) in units where number.hasSuffix(suffix) {
            number = number.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Int(number.trimmingSpaces), value > 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: scale)
        return overflow ? nil : bytes
    }
}

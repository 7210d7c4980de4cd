import AppHost
import AppHostSystemd
import Logging

/// Durations: deadlines and memory-pressure windows, in range and never trapping.
extension ConfigurationLoader {
    /// A deadline: more than 0 and at most a day.
    func deadline(_ section: ServiceSection, _ key: String) throws(ConfigurationError) -> Duration? {
        try duration(section, key, in: .milliseconds(1) ... Self.longestDeadline, hint: "expected more than 0 and at most 24h, like 250ms, 5s, 2m or 1h")
    }

    /// A duration within `range`, refusing negative values with their own message.
    func duration(_ section: ServiceSection, _ key: String, in range: ClosedRange<Duration>, hint: String) throws(ConfigurationError) -> Duration? {
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

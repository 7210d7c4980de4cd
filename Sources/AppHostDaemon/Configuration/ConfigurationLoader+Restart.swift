import AppHost

/// A service's restart policy: `restart:`, `restart-scope:`, `restart-delay:`,
/// `restart-delay-max:` and `restart-intensity:` (`5 in 60s`).
extension ConfigurationLoader {
    static let restartKeys = ["restart", "restart-scope", "restart-delay", "restart-delay-max", "restart-intensity"]

    /// The entry's policy; every problem of its keys is recorded, and a key that has no effect
    /// under the policy's mode is one too.
    func restartPolicy(_ entry: ServiceSection, problems: inout ConfigurationErrorCollector) -> RestartPolicy {
        var policy = RestartPolicy()
        let modes = RestartPolicy.Mode.allCases.map(\.rawValue)
        if let mode = problems.read({ () throws(ConfigurationError) in try entry.choice("restart", of: modes) }) {
            policy.mode = RestartPolicy.Mode(rawValue: mode) ?? .temporary
        }
        let scopes = RestartPolicy.Scope.allCases.map(\.rawValue)
        if let scope = problems.read({ () throws(ConfigurationError) in try entry.choice("restart-scope", of: scopes) }) {
            policy.scope = RestartPolicy.Scope(rawValue: scope) ?? .runLoop
        }
        let delayHint = "expected more than 0 and at most 24h, like 100ms, 5s or 2m"
        if let delay = problems.read({ () throws(ConfigurationError) in try self.duration(entry, "restart-delay", in: .milliseconds(1) ... Self.longestDeadline, hint: delayHint) }) {
            policy.delay = delay
        }
        if let maximum = problems.read({ () throws(ConfigurationError) in try self.duration(entry, "restart-delay-max", in: .milliseconds(1) ... Self.longestDeadline, hint: delayHint) }) {
            policy.maximumDelay = maximum
            if entry.values["restart-delay"] != nil, maximum < policy.delay {
                problems.record(entry.error("restart-delay-max", "\(maximum.configText) is shorter than restart-delay (\(policy.delay.configText))", hint: "the delay doubles up to this maximum: make it at least restart-delay"))
            }
        } else if entry.values["restart-delay-max"] == nil {
            policy.maximumDelay = max(policy.maximumDelay, policy.delay)
        }
        if let intensity = problems.read({ () throws(ConfigurationError) in try Self.restartIntensity(entry) }) {
            (policy.intensity, policy.period) = intensity
        }
        if policy.mode == .temporary {
            for key in Self.restartKeys.dropFirst() where entry.values[key] != nil {
                problems.record(entry.error(key, "\(key) has no effect: the service is never restarted", hint: "add restart: transient (after an error) or restart: permanent (whenever its run loop ends), or remove \(key)"))
            }
        }
        return policy
    }

    /// `restart-intensity: 5 in 60s`: at most 5 restarts within 60 s, 0 to 1000 of them.
    static func restartIntensity(_ entry: ServiceSection) throws(ConfigurationError) -> (Int, Duration)? {
        guard let value = entry.values["restart-intensity"] else { return nil }
        let hint = "write the most restarts allowed within a window, like 5 in 60s (0 to 1000 restarts, a window of up to 24h)"
        guard case .string(let text) = value else {
            throw entry.error("restart-intensity", "expected a count and a window, found \(value.typeName)", hint: hint)
        }
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count == 3, words[1] == "in", let count = Int(words[0]), (0...1000).contains(count),
            !isHugeDuration(String(words[2])), let period = Duration(configText: String(words[2])),
            period > .zero, period <= longestDeadline
        else {
            throw entry.error("restart-intensity", "\"\(text)\" is not a count and a window", hint: hint)
        }
        return (count, period)
    }
}

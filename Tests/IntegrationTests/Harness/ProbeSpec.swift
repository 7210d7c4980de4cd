/// One `probe` service in a generated config.
struct ProbeSpec: Sendable {
    /// A deliberate misbehaviour (see the probe's `faults` setting).
    struct Fault: Sendable {
        var hook: String
        var action: String
        var duration: String?
    }

    /// Instance name (unique in the config).
    var name: String
    /// Whether a launch failure stops the daemon.
    var required = false
    /// Per-service launch deadline, such as `60s`.
    var launchDeadline: String?
    /// Per-service hook deadline.
    var deadline: String?
    /// Faults to inject.
    var faults: [Fault] = []

    init(_ name: String, required: Bool = false, launchDeadline: String? = nil, deadline: String? = nil, faults: [Fault] = []) {
        self.name = name
        self.required = required
        self.launchDeadline = launchDeadline
        self.deadline = deadline
        self.faults = faults
    }

    /// The YAML list item, recording to `recordTo`.
    func yaml(recordTo: String) -> String {
        var lines = [
            "  - name: \(name)",
            "    type: probe",
            "    required: \(required)",
        ]
        if let launchDeadline { lines.append("    launch-deadline: \(launchDeadline)") }
        if let deadline { lines.append("    deadline: \(deadline)") }
        lines.append("    settings:")
        lines.append("      record-to: \(recordTo)")
        if !faults.isEmpty {
            lines.append("      faults:")
            for fault in faults {
                var item = "        - { hook: \(fault.hook), action: \(fault.action)"
                if let duration = fault.duration { item += ", duration: \(duration)" }
                lines.append(item + " }")
            }
        }
        return lines.joined(separator: "\n")
    }
}

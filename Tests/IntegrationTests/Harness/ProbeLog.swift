import Foundation

/// The file the `probe` services record to: one `<instance> <event>` line at the start of each hook,
/// in the order the hooks ran (one O_APPEND write per line, so several probes can share a file).
struct ProbeLog: Sendable, CustomStringConvertible {
    /// One recorded hook.
    struct Entry: Sendable, Hashable {
        let instance: String
        let event: String
    }

    /// Every entry, oldest first.
    let entries: [Entry]

    /// Reads `path`; a missing file is an empty log (nothing recorded yet).
    init(path: String) {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        // A line without its newline is still being written: ignore it.
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex)])
        entries = complete.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return Entry(instance: String(parts[0]), event: String(parts[1]))
        }
    }

    /// The events of one instance, in order.
    func events(of instance: String) -> [String] {
        entries.filter { $0.instance == instance }.map(\.event)
    }

    /// The instances that recorded `event`, in the order they recorded it.
    func instances(that event: String) -> [String] {
        entries.filter { $0.event == event }.map(\.instance)
    }

    /// Whether `instance` recorded `event`.
    func contains(_ instance: String, _ event: String) -> Bool {
        entries.contains(Entry(instance: instance, event: event))
    }

    /// How often `instance` recorded `event`.
    func count(_ instance: String, _ event: String) -> Int {
        entries.filter { $0.instance == instance && $0.event == event }.count
    }

    /// The lifecycle state `instance` was last brought to, judged by its transition events.
    func lastState(of instance: String) -> String? {
        var state: String?
        for event in events(of: instance) {
            if let next = Self.transitions[event] { state = next }
        }
        return state
    }

    /// Where each transition event leaves a service.
    static let transitions: [String: String] = [
        "willFinishLaunching": "launching",
        "didFinishLaunching": "launched",
        "didBecomeActive": "active",
        "willResignActive": "inactive",
        "didEnterBackground": "background",
        "willEnterForeground": "inactive",
        "willTerminate": "terminating",
    ]

    /// Which transition events are legal in each state (UIKit's graph; a service added on reload goes
    /// from launched straight to the host's state; any running state may terminate).
    static let legalNext: [String?: Set<String>] = [
        nil: ["willFinishLaunching"],
        "launching": ["didFinishLaunching", "willTerminate"],
        "launched": ["didBecomeActive", "didEnterBackground", "willTerminate"],
        "active": ["willResignActive", "willTerminate"],
        "inactive": ["didEnterBackground", "didBecomeActive", "willTerminate"],
        "background": ["willEnterForeground", "willTerminate"],
        "terminating": [],
    ]

    /// Every illegal step in `instance`'s sequence (duplicated or skipped transitions), as text.
    /// Events that are not transitions (memory warnings, protected data, configuration) are legal anywhere
    /// after launch began.
    func violations(of instance: String) -> [String] {
        var state: String?
        var problems: [String] = []
        for (index, event) in events(of: instance).enumerated() {
            guard let next = Self.transitions[event] else {
                if state == nil || state == "terminating" { problems.append("#\(index) \(event) while \(state ?? "not running")") }
                continue
            }
            if !(Self.legalNext[state]?.contains(event) ?? false) {
                problems.append("#\(index) \(event) while \(state ?? "not running")")
            }
            state = next
        }
        return problems
    }

    /// The last `count` lines, for failure messages.
    func tail(_ count: Int = 40) -> String {
        let lines = entries.suffix(count).map { "\($0.instance) \($0.event)" }
        let skipped = entries.count - lines.count
        return (skipped > 0 ? "(\(skipped) earlier lines)\n" : "") + lines.joined(separator: "\n")
    }

    var description: String { tail() }
}

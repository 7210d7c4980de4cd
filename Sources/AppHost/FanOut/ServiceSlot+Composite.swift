/// What the composites of the configuration run, read off the host's services.
extension [ServiceSlot] {
    /// Whether an enabled service is at `path` or under it (a composite child's leaves).
    func isRunning(_ path: String) -> Bool {
        contains { ($0.name == path || $0.name.hasPrefix(path + "/")) && $0.health.isEnabled }
    }

    /// What the first-ofs and one-ofs under `node` run, as `notify → journal`: the child with a
    /// running service.
    func compositeChoices(of node: ServiceDescriptor, path: String? = nil) -> [String] {
        guard let composite = node.composite else { return [] }
        let name = path.map { "\($0)/\(node.name)" } ?? node.name
        var choices: [String] = []
        if composite.kind != .group, let running = composite.candidates.first(where: { isRunning("\(name)/\($0.name)") }) {
            choices.append("\(name) → \(running.name)")
        }
        return choices + composite.candidates.flatMap { compositeChoices(of: $0, path: name) }
    }
}

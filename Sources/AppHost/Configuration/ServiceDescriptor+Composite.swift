extension ServiceDescriptor {
    /// A composite entry: `composite`'s children under this name, required or optional as a
    /// whole in its parent.
    public init(name: String, isRequired: Bool = true, composite: ServiceComposite) {
        self.init(name: name, type: composite.kindName, isRequired: isRequired) {
            throw ConfigurationError(keyPath: name, message: "\(name) is a \(composite.kindName): it has no instance of its own")
        }
        self.composite = composite
    }

    /// Whether this entry groups other services.
    public var isComposite: Bool { composite != nil }

    /// The services this entry stands for, as the host runs them: itself, or its composite's
    /// services (a one-of's chosen child only), named by their path (`notify/desktop`) and
    /// required only where the composite is too. `children` picks which of a composite's
    /// children count, given its path (a reload keeps a first-of's choice).
    func leaves(
        path: String? = nil,
        required: Bool = true,
        children: (_ path: String, _ composite: ServiceComposite) -> [ServiceDescriptor] = { $1.candidates }
    ) -> [ServiceDescriptor] {
        let qualified = path.map { $0 + "/" + name } ?? name
        guard let composite else {
            var leaf = self
            leaf.name = qualified
            leaf.isRequired = isRequired && required
            return [leaf]
        }
        let required = isRequired && required
        return children(qualified, composite).flatMap { child in
            composite.member(child).leaves(path: qualified, required: required, children: children)
        }
    }

    /// The problems of this entry's composites, each named by its key path.
    func compositeProblems(keyPath: String, depth: Int = 1) -> [ConfigurationError] {
        guard let composite else { return [] }
        var problems: [ConfigurationError] = []
        let file = configuration.file
        if depth > ServiceComposite.maximumDepth {
            problems.append(ConfigurationError(
                file: file, keyPath: keyPath, message: "\(name): composites nest \(depth) deep",
                hint: "at most \(ServiceComposite.maximumDepth) levels"
            ))
            return problems
        }
        if composite.children.isEmpty {
            problems.append(ConfigurationError(file: file, keyPath: keyPath, message: "\(name): a \(composite.kindName) with no children", hint: "give it at least one service"))
        }
        if case .oneOf(let chosen, _) = composite.kind, !composite.children.contains(where: { $0.name == chosen }) {
            let names = composite.children.map(\.name).joined(separator: ", ")
            problems.append(ConfigurationError(file: file, keyPath: keyPath, message: "\(name): one-of chose \"\(chosen)\", which is none of its children", hint: "one of: \(names)"))
        }
        for (position, child) in composite.children.enumerated() {
            if child.name.contains("/") {
                problems.append(ConfigurationError(file: child.configuration.file, keyPath: "\(keyPath).children[\(position)].name", message: "\"\(child.name)\": a name may not contain /", hint: "/ joins a composite's name to its children's"))
            }
            problems += child.compositeProblems(keyPath: "\(keyPath).children[\(position)]", depth: depth + 1)
        }
        return problems
    }
}

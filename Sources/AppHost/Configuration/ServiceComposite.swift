/// A grouping of services the host knows: which of its children launch and how their results
/// combine. The children stay services of the host, each with its own deadline and its own place
/// in the fan-out (so a hung child stalls only itself); the composite takes its place in its
/// parent's order and orders its children's events inside it, up in order and down in reverse.
///
/// Children are named for people by their path, `notify/desktop`: in the log, `STATUS=`,
/// analytics and metrics.
public struct ServiceComposite: Sendable {
    /// How the children launch and combine.
    public enum Kind: Sendable, Hashable {
        /// Best effort: the children are tried at launch in order, and the first whose launch
        /// succeeds is the composite; the others are not launched.
        case firstOf
        /// Exactly one child, `chosen` before launch (by a setting or an environment variable);
        /// `reason` says why, for the launch's log line.
        case oneOf(chosen: String, reason: String)
        /// A flow of its own: the children launch in order with their own required and optional
        /// flags, and roll back together when a required one fails; one service to its parent.
        case group
    }

    /// The deepest nesting of composites the host accepts.
    public static let maximumDepth = 4

    /// How the children launch and combine.
    public var kind: Kind
    /// The children, in launch order.
    public var children: [ServiceDescriptor]

    /// A composite of `kind` over `children`.
    public init(_ kind: Kind, children: [ServiceDescriptor]) {
        self.kind = kind
        self.children = children
    }

    /// The children that launch: all of them, or a one-of's chosen one.
    var candidates: [ServiceDescriptor] {
        if case .oneOf(let chosen, _) = kind { return children.filter { $0.name == chosen } }
        return children
    }

    /// `child` as this composite counts it: a group's child with its own required flag; a
    /// first-of's or a one-of's child is what the composite is, required as it is.
    func member(_ child: ServiceDescriptor) -> ServiceDescriptor {
        guard kind != .group else { return child }
        var member = child
        member.isRequired = true
        return member
    }

    /// What the log calls it.
    var kindName: String {
        switch kind {
        case .firstOf: "first-of"
        case .oneOf: "one-of"
        case .group: "group"
        }
    }
}

/// Every problem found in one configuration, in the order of the file, so that an operator
/// fixes them all in one go instead of one per run.
public struct ConfigurationErrors: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, at least one, in file order.
    public let errors: [ConfigurationError]

    /// The problems in `errors`; nil when there are none.
    public init?(_ errors: [ConfigurationError]) {
        guard !errors.isEmpty else { return nil }
        self.errors = errors
    }

    /// One problem.
    public init(_ error: ConfigurationError) {
        errors = [error]
    }

    /// The first problem in the file.
    public var first: ConfigurationError { errors[0] }

    /// One problem per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }

    /// The first problem, and how many more there are: `FILE:2: host: … (and 2 more problems)`;
    /// for `STATUS=`, which shows one line.
    public var summary: String {
        switch errors.count {
        case 1: first.description
        case 2: "\(first) (and 1 more problem)"
        default: "\(first) (and \(errors.count - 1) more problems)"
        }
    }
}

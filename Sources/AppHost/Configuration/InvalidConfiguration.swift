/// Every problem found in one configuration, in the order of the file, so that an operator
/// fixes them all in one go instead of one per run.
public struct InvalidConfiguration: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, at least one, in file order.
    public let errors: [ConfigurationError]
    /// Problems found after `errors`, counted but not kept: a broken file of a megabyte can
    /// have a hundred thousand, and nobody reads past the first screen.
    public let omitted: Int

    /// The problems in `errors`, and how many more were left out; nil when there are none.
    public init?(_ errors: [ConfigurationError], omitted: Int = 0) {
        guard !errors.isEmpty else { return nil }
        self.errors = errors
        self.omitted = omitted
    }

    /// One problem.
    public init(_ error: ConfigurationError) {
        errors = [error]
        omitted = 0
    }

    /// The first problem in the file.
    public var first: ConfigurationError { errors[0] }

    /// How many problems were found, the omitted ones included.
    public var count: Int { errors.count + omitted }

    /// One problem per line, and a last line saying how many were left out, if any.
    public var description: String {
        let shown = errors.map(\.description)
        return (omitted == 0 ? shown : shown + ["… and \(omitted) more \(omitted == 1 ? "problem" : "problems") not shown"])
            .joined(separator: "\n")
    }

    /// The first problem, and how many more there are: `FILE:2: host: … (and 2 more problems)`;
    /// for `STATUS=`, which shows one line.
    public var summary: String {
        switch count {
        case 1: first.description
        case 2: "\(first) (and 1 more problem)"
        default: "\(first) (and \(count - 1) more problems)"
        }
    }
}

/// Why the session secret could not be loaded, told as what to fix. Never carries the secret.
struct SecretUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file that was tried, or the variable that was missing.
    let path: String
    /// What is wrong with it.
    let problem: String
    /// What the operator should do.
    let fix: String

    var description: String { "\(path) \(problem) (\(fix))" }
}
